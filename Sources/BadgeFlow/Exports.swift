// Users of BadgeFlow get the tree, its observation and the sync policy with one import.
@_exported import BadgeTree

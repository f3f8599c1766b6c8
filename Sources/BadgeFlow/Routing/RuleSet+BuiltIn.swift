/// The built-in rule set; `Fixtures/rules/default.json` holds the same text (a test checks).
extension RuleSet {
    /// The text of the built-in rules, for users to copy and edit (`badgeflow rules`).
    public static let builtInText = #"""
        {
          "version": 1,
          "root": "root",
          "icon": "tree",
          "maxDisplay": 99,
          "display": {
            "root.news": "dot",
            "root.promotion": { "custom": "new" }
          },
          "rules": [
            { "name": "read-elsewhere", "match": { "/type": "read" },
              "path": "root.chat.{/thread}", "action": "clear" },
            { "name": "unread-sync", "match": { "/type": "unread", "/aps/content-available": 1 },
              "path": "root.inbox", "action": { "set": "/unread" } },
            { "name": "chat", "match": { "/aps/thread-id": { "exists": true } },
              "path": "root.chat.{/aps/thread-id}", "action": "increment" },
            { "name": "promo", "match": { "/promo": { "exists": true } },
              "path": "root.promotion.{/promo/campaign}", "action": "dot" },
            { "name": "news", "match": { "/aps/category": "news" },
              "path": "root.news", "action": "dot" },
            { "name": "category", "match": { "/aps/category": { "exists": true } },
              "path": "root.{/aps/category}", "action": "increment" },
            { "name": "silent", "match": { "/aps/content-available": 1 },
              "path": "root", "action": "ignore" }
          ],
          "sync": { "pages": ["home", "mine"], "interval": 60, "away": 60 }
        }
        """#
}

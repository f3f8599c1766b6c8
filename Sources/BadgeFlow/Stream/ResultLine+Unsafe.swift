// ResultLine's work on raw memory: a list of states written from a borrowed buffer of the
// array (no copy of an element), inside one reserved run of the writer. Relies on the run's
// bound: `stateBound` of every state adds up to at least the bytes `state` writes.

extension ResultLine {
    /// The states as array elements, each borrowed in place (no copy of its path or display),
    /// all in one reserved run: one capacity check for the whole list, not one per state.
    static func states(_ list: [BadgeState], into w: inout JSONWriter) {
        list.withUnsafeBufferPointer { list in
            guard !list.isEmpty else { return }
            var bound = 0
            for i in list.indices { bound += stateBound(list[i]) }
            w.writeRun(atMost: bound) { o in
                for i in list.indices { state(list[i], first: i == 0, into: &o) }
            }
        }
    }
}

/// A first-in first-out queue with amortised O(1) push and pop: an array and
/// a read index, compacted when the consumed prefix dominates. (The package
/// depends on no collections library; this is all the queue needs.)
struct FIFO<Element> {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }

    mutating func append(_ element: Element) {
        storage.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.count <= 4096)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}

/// Waits until `condition` holds, looking every few milliseconds, for at
/// most `limit`. Returns whether it held: a bounded wait on a condition,
/// never a fixed sleep as proof.
public func eventually(within limit: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return condition()
}

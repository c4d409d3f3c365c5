import Testing

@testable import RequestReply

/// The request/reply bookkeeping without sockets or a clock: waiters are plain
/// strings, payloads plain numbers, and the time is whatever the test says.
/// (The table cannot be copied, so each value is read into a local before
/// `#expect` looks at it.)
@Suite struct PendingRequestsTests {
    typealias Requests = PendingRequests<String, Int>
    let t0 = ContinuousClock.now

    /// Puts `waiter` in to wait until `t0 + seconds`: its id and admission.
    func put(_ requests: inout Requests, _ waiter: String, dueIn seconds: Int, payload: Int = 0)
        -> (id: Requests.ID, admission: RequestAdmission)
    {
        let id = requests.makeID()
        return (id, requests.wait(id, waiter: waiter, deadline: t0 + .seconds(seconds), payload: payload))
    }

    @Test func idsAreUniqueAndStartAfterTheOneGiven() {
        var requests = Requests(idsAfter: 41)
        let ids = (0..<1_000).map { _ in requests.makeID() }
        #expect(ids.first == 42)
        #expect(Set(ids).count == ids.count)
        var wrapping = Requests(idsAfter: .max)
        let wrapped = wrapping.makeID()
        #expect(wrapped == 0, "ids wrap rather than trap")
    }

    @Test func anAnswerIsDeliveredOnceAndItsPayloadKeptUntilThen() {
        var requests = Requests()
        let (id, admission) = put(&requests, "a", dueIn: 10, payload: 7)
        #expect(admission == .waiting(wakeTimer: false), "no timer sleeps yet: nothing to wake")
        let payload = requests.payload(of: id)
        let first = requests.answered(id)
        let duplicate = requests.answered(id)
        let payloadAfter = requests.payload(of: id)
        let stranger = requests.answered(999)
        let count = requests.count
        #expect(payload == 7)
        #expect(first == "a")
        #expect(duplicate == nil, "a duplicate answer finds nobody")
        #expect(payloadAfter == nil)
        #expect(stranger == nil, "nor does an answer to a request never made")
        #expect(count == 0)
    }

    @Test func whatIsPastItsDeadlineExpiresAndALateAnswerIsIgnored() {
        var requests = Requests()
        let soon = put(&requests, "soon", dueIn: 1).id
        let later = put(&requests, "later", dueIn: 5).id
        let before = requests.timerWoke(now: t0).map(\.waiter)
        let atDeadline = requests.timerWoke(now: t0 + .seconds(1)).map(\.waiter)
        let late = requests.answered(soon)
        let laterWaits = requests.isWaiting(later)
        #expect(before.isEmpty)
        #expect(atDeadline == ["soon"], "due at its deadline")
        #expect(late == nil, "its answer came too late")
        #expect(laterWaits)
    }

    @Test func aCancelledRequestLeavesTheTableEvenBeforeItWaits() {
        var requests = Requests()
        let id = put(&requests, "a", dueIn: 10).id
        let cancelled = requests.cancel(id)
        let again = requests.cancel(id)
        let answer = requests.answered(id)
        #expect(cancelled == "a")
        #expect(again == nil, "once")
        #expect(answer == nil)
        // Cancelled between taking its id and coming to wait: it never waits.
        let early = requests.makeID()
        let nothingYet = requests.cancel(early)
        let admission = requests.wait(early, waiter: "early", deadline: t0 + .seconds(10), payload: 0)
        let count = requests.count
        let afterwards = requests.cancel(early)
        #expect(nothingYet == nil)
        #expect(admission == .cancelled)
        #expect(count == 0)
        #expect(afterwards == nil, "nothing of it is kept")
    }

    @Test func stoppingFailsEveryWaiterAndRefusesNewRequests() {
        var requests = Requests()
        _ = put(&requests, "a", dueIn: 10)
        _ = put(&requests, "b", dueIn: 20)
        let failed = requests.stop()
        let stopped = requests.stopped
        let admission = put(&requests, "c", dueIn: 10).admission
        let count = requests.count
        let again = requests.stop()
        #expect(Set(failed) == ["a", "b"])
        #expect(stopped)
        #expect(admission == .refused)
        #expect(count == 0)
        #expect(again.isEmpty)
    }

    @Test func failedTakesOutOnlyWhatStillWaits() {
        var requests = Requests()
        let a = put(&requests, "a", dueIn: 10).id
        let b = put(&requests, "b", dueIn: 10).id
        _ = requests.answered(a)
        let failed = requests.failed([a, b, 999])
        let count = requests.count
        #expect(failed == ["b"])
        #expect(count == 0)
    }

    @Test func theAlarmIsTheEarliestDeadlineOrTheClientsOwnAndNilWhenNothingWaits() {
        var requests = Requests()
        let idle = requests.timerSleeps()
        let ownOnly = requests.timerSleeps(alsoDue: t0 + .seconds(3))
        _ = put(&requests, "a", dueIn: 5)
        _ = put(&requests, "b", dueIn: 2)
        let earliest = requests.timerSleeps()
        let ownSooner = requests.timerSleeps(alsoDue: t0 + .seconds(1))
        _ = requests.timerWoke(now: t0 + .seconds(5))
        let allExpired = requests.timerSleeps()
        #expect(idle == nil, "nothing waits: sleep until woken")
        #expect(ownOnly == t0 + .seconds(3))
        #expect(earliest == t0 + .seconds(2))
        #expect(ownSooner == t0 + .seconds(1))
        #expect(allExpired == nil, "all expired: nothing left to wake for")
    }

    @Test func onlyADeadlineSoonerThanTheAlarmWakesTheTimerAndOnceASleep() {
        var requests = Requests()
        _ = put(&requests, "later", dueIn: 10)
        _ = requests.timerSleeps()
        let after = put(&requests, "after", dueIn: 20).admission
        let sooner = put(&requests, "sooner", dueIn: 5).admission
        // Woken: the loop looks at everything before it sleeps again, so no second wake-up.
        let soonerStill = put(&requests, "sooner still", dueIn: 1).admission
        _ = requests.timerWoke(now: t0)
        let alarm = requests.timerSleeps()
        let dueWithAlarm = requests.wakeTimer(for: t0 + .seconds(1))
        let dueBefore = requests.wakeTimer(for: t0 + .milliseconds(500))
        #expect(after == .waiting(wakeTimer: false))
        #expect(sooner == .waiting(wakeTimer: true))
        #expect(soonerStill == .waiting(wakeTimer: false))
        #expect(alarm == t0 + .seconds(1), "the alarm moved earlier")
        #expect(!dueWithAlarm, "due with the alarm: no need to wake")
        #expect(dueBefore)
    }

    @Test func aTimerSleepingWithNothingDueIsWokenByAnything() {
        var requests = Requests()
        _ = requests.timerSleeps()
        let farOff = put(&requests, "far off", dueIn: 3_600).admission
        _ = requests.timerWoke(now: t0)
        let wakeups = requests.timerWakeups
        let alarm = requests.timerSleeps()
        #expect(farOff == .waiting(wakeTimer: true))
        #expect(wakeups == 1)
        #expect(alarm == t0 + .seconds(3_600))
    }

    @Test func anAwakeTimerIsNeverWoken() {
        var requests = Requests()
        // Not started yet, or between its wake-up and its next sleep: it will see the request itself.
        let beforeStart = put(&requests, "a", dueIn: 1).admission
        _ = requests.timerWoke(now: t0)
        let awake = requests.wakeTimer(for: t0)
        #expect(beforeStart == .waiting(wakeTimer: false))
        #expect(!awake)
    }
}

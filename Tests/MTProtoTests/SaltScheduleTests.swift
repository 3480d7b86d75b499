// SaltSchedule keeps an hourly schedule as a seed and derives each salt when asked; these check it answers exactly
// as the same salts stored as a list do, at every moment from before the first salt to after the last.
import MTProto
import Testing

@Suite struct SaltScheduleTests {
    @Test(arguments: [(64, Int32(1800)), (1, Int32(1800)), (5, Int32(0)), (12, Int32(7300))])
    func derivedScheduleAnswersAsItsStoredSalts(count: Int, overlap: Int32) {
        let start = 1_700_000_000.0
        let derived = SaltSchedule.hourly(first: 42, start: start, count: count, overlap: overlap,
                                          random: SeededRandom(seed: 9))
        let salts = derived.salts
        #expect(salts.count == count)
        #expect(salts.first?.salt == 42)
        #expect(Set(salts.map(\.salt)).count == count, "the derived salts repeat")
        #expect(zip(salts, salts.dropFirst()).allSatisfy { $0.validSince + 3600 == $1.validSince })
        let stored = SaltSchedule(salts)
        #expect(derived == stored)
        #expect(derived.hashValue == stored.hashValue)

        var checked = 0
        var time = start - 7200
        while time < start + Double(count + 3) * 3600 {
            for salt in salts.map(\.salt) + [7] {
                #expect(derived.accepts(salt, at: time) == stored.accepts(salt, at: time), "salt \(salt) at \(time)")
            }
            #expect(derived.current(at: time) == stored.current(at: time), "at \(time)")
            for limit in [0, 1, 3, 64, 100] {
                #expect(derived.upcoming(from: time, count: limit) == stored.upcoming(from: time, count: limit),
                        "\(limit) upcoming at \(time)")
            }
            checked += 1
            time += 599  // not a divisor of an hour, so every offset into a salt's hour comes up
        }
        #expect(checked > 20)
        #expect(derived.accepts(42, at: .nan) == false)
        #expect(derived.current(at: .infinity) == stored.current(at: .infinity))
    }

    @Test func differentDrawsGiveDifferentSalts() {
        let a = SaltSchedule.hourly(first: 1, start: 0, random: SeededRandom(seed: 1))
        let b = SaltSchedule.hourly(first: 1, start: 0, random: SeededRandom(seed: 2))
        #expect(a.salts.dropFirst().map(\.salt) != b.salts.dropFirst().map(\.salt))
        #expect(a != b)
    }
}

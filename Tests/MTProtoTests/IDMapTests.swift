// IDMap against Dictionary: the same random operations on both must leave the same contents, with keys spread by
// the hash and with every key sent to one home slot (multiplier 1), where deletions must shift entries back across
// the end of the table.
@testable import MTProto
import Testing

@Suite struct IDMapTests {
    /// `steps` random inserts, updates, in-place changes, removals and lookups over `keys` distinct keys.
    static func compare(multiplier: UInt64, keys: [UInt64], steps: Int, seed: UInt64) {
        let random = SeededRandom(seed: seed)
        var map = IDMap<UInt64, Int>(multiplier: multiplier)
        var reference: [UInt64: Int] = [:]
        for step in 0..<steps {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            switch random.next() % 6 {
                case 0, 1:
                    #expect(map.updateValue(step, forKey: key) == reference.updateValue(step, forKey: key))
                case 2:
                    #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
                case 3:
                    map[key]? += 1
                    reference[key]? += 1
                case 4:
                    let value: Int? = random.next() % 2 == 0 ? nil : step
                    map[key] = value
                    reference[key] = value
                default:
                    #expect(map[key] == reference[key])
            }
            #expect(map.count == reference.count)
        }
        for key in keys { #expect(map[key] == reference[key], "\(key)") }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == reference)
        #expect(map.isEmpty == reference.isEmpty)
    }

    @Test func matchesDictionary() {
        let spread = (0..<500).map { UInt64($0) &* 0x0123_4567_89AB_CDEF }
        Self.compare(multiplier: IDMap<UInt64, Int>.fixedMultiplier, keys: spread, steps: 20_000, seed: 1)
        // Sequential ids, as msg_ids and request numbers are.
        Self.compare(multiplier: 0xDEAD_BEEF_1234_5678, keys: (1_000..<1_300).map { UInt64($0) * 4 }, steps: 20_000, seed: 2)
    }

    @Test func peerKeyedMatchesDictionary() {
        var map = IDMap<UInt64, Int>(peerSeed: 0x5EED)
        var reference: [UInt64: Int] = [:]
        let random = SeededRandom(seed: 4)
        for step in 0..<20_000 {
            let key = 1_700_000_000 << 32 &+ (random.next() % 600) * 4
            if random.next() % 3 == 0 {
                #expect(map.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                #expect(map.updateValue(step, forKey: key) == reference.updateValue(step, forKey: key))
            }
        }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == reference)
    }

    /// Average distance from home slot to slot over the keys, once all are in.
    static func averageDisplacement<V>(_ map: IDMap<Int64, V>, _ keys: [Int64]) -> Double {
        let mask = map.used.count - 1
        let total = keys.reduce(0) { sum, key in
            let (index, found) = map.find(key)
            precondition(found)
            return sum + ((index - map.home(key.idBits)) & mask)
        }
        return Double(total) / Double(keys.count)
    }

    /// A peer's consecutive msg_ids (an arithmetic progression, 100 in flight) stay close to their home slots under
    /// every seed (0.3 slots from home at worst); a random multiplier instead put them 37.9 slots away at worst.
    @Test func peerKeyedMapsSpreadConsecutiveMsgIDsUnderEverySeed() {
        let keys = (0..<100).map { (Int64(1_700_000_000) << 32) + Int64($0) * 4 }
        var worst = 0.0
        for seed in 0..<500 as Range<UInt64> {
            var map = IDMap<Int64, Int>(peerSeed: seed &* 0x9E37_79B9_7F4A_7C15)
            for key in keys { map[key] = 1 }
            worst = max(worst, Self.averageDisplacement(map, keys))
        }
        #expect(worst < 0.5, "average displacement \(worst)")
    }

    @Test func matchesDictionaryWhenEveryKeyCollides() {
        // Multiplier 1: small keys all hash to slot 0, so every probe run is one long cluster that wraps around.
        Self.compare(multiplier: 1, keys: (0..<40).map { UInt64($0) }, steps: 5_000, seed: 3)
    }

    @Test func removeAllAndGrowth() {
        var map = IDMap<Int64, String>()
        for id in Int64(0)..<1_000 { map[id * 3] = "\(id)" }
        #expect(map.count == 1_000)
        #expect(map[2_997] == "999" && map[2_998] == nil)
        map.removeAll(keepingCapacity: true)
        #expect(map.isEmpty && map[0] == nil)
        map[-5] = "x"
        #expect(map.keys == [-5] && map.values == ["x"] && Array(map).first?.key == -5)
    }

    /// A map that held many entries shrinks to the smallest table for what is left, every entry still found, and
    /// grows again from there; an empty one keeps no table.
    @Test func shrinkToFit() {
        var map = IDMap<Int64, Int>(peerSeed: 0x5eed)
        for id in Int64(0)..<1_000 { map[id * 4] = Int(id) }
        for id in Int64(10)..<1_000 { map[id * 4] = nil }
        #expect(map.used.count == 2_048)
        map.shrinkToFit()
        #expect(map.used.count == 16)
        #expect(map.count == 10 && (0..<10).allSatisfy { map[Int64($0) * 4] == $0 } && map[40] == nil)
        for id in Int64(10)..<100 { map[id * 4] = Int(id) }
        #expect((0..<100).allSatisfy { map[Int64($0) * 4] == $0 })
        for id in Int64(0)..<100 { map[id * 4] = nil }
        map.shrinkToFit()
        #expect(map.isEmpty && map.used.isEmpty && map[0] == nil)
        map[8] = 1
        #expect(map[8] == 1 && map.count == 1)
    }
}

/// ReceivedIDs (sorted, oldest id forgotten first) against a dictionary model, with ids mostly increasing as
/// msg_ids arrive, some out of order, some repeated, and lookups of recent, old and unknown ids.
@Suite struct ReceivedIDsTests {
    @Test func matchesAModel() {
        let random = SeededRandom(seed: 11)
        var received = ReceivedIDs(capacity: 64)
        var model: [Int64: ReceivedIDs.Entry] = [:]
        var floor: Int64 = 0
        var next: Int64 = 1_000
        for step in 0..<20_000 {
            let id: Int64
            switch random.next() % 10 {
                case 0: id = next - Int64(random.next() % 200)            // out of order, maybe forgotten or seen
                case 1: id = next - 4                                       // a repeat of a recent id
                default:
                    next += 4 * Int64(1 + random.next() % 3)
                    id = next
            }
            switch random.next() % 4 {
                case 0:
                    let seqNo = Int32(step)
                    received.insert(id, seqNo: seqNo, isRequest: step % 2 == 0)
                    model[id] = .init(seqNo: seqNo, isRequest: step % 2 == 0, answered: false)
                    while model.count > 64, let oldest = model.keys.min() {
                        model[oldest] = nil
                        floor = max(floor, oldest)
                    }
                case 1:
                    if step % 2 == 0 { received[id]?.answered = true } else { received.markAnswered(id) }
                    model[id]?.answered = true
                default:
                    #expect(received.contains(id) == (model[id] != nil), "\(id) at step \(step)")
                    #expect(received[id]?.seqNo == model[id]?.seqNo)
                    #expect(received[id]?.answered == model[id]?.answered)
            }
            #expect(received.count == model.count)
            #expect(received.floor == floor)
            if step % 500 == 0 {
                // Every id remembered (the oldest too) and its neighbours, found or not as the model says.
                for id in model.keys.flatMap({ [$0 - 1, $0, $0 + 1] }) {
                    #expect(received.contains(id) == (model[id] != nil), "\(id) at step \(step)")
                }
            }
        }
    }

    /// An id more than `maxLateness` places behind the newest counts as too old, so no insert shifts more than that.
    @Test func idsFarBehindTheNewestAreTooOld() {
        var received = ReceivedIDs(capacity: 65_536)
        let ids = (1...5_000).map { Int64($0) * 4 }
        for id in ids { received.insert(id, seqNo: 1, isRequest: false) }
        let boundary = ids[ids.count - ReceivedIDs.maxLateness]
        #expect(received.floor == 0)
        #expect(received.isTooOld(boundary - 2), "just behind the boundary")
        #expect(!received.isTooOld(boundary + 2), "just ahead of it")
        #expect(!received.isTooOld(ids[ids.count - 1] + 4), "a new id")
        #expect(received.isTooOld(0))
    }
}

// A hash map for the session's 64-bit ids (msg_ids, request numbers, call tokens). Swift's `Dictionary` hashes
// every key with SipHash: 12–14 % of a pipelining client's and of the test server's time went to its lookups (perf,
// 200,000 calls). Here a lookup is a few arithmetic instructions and usually one compare: open addressing with
// linear probing and backward-shift deletion (Knuth, TAOCP 6.4 algorithm R), so there are no tombstones.
//
// Keys are spread by Fibonacci hashing (multiply by 2^64 / golden ratio, keep the top bits), which keeps an arithmetic
// progression — sequential request numbers, consecutive msg_ids — evenly spaced. Keys a peer chooses (the msg_ids it
// sends) are first XORed with a seed that is random per process, so which of them share a slot depends on a value the
// peer does not know. Before, those maps multiplied by a random multiplier instead (universal, but weak under linear
// probing; Pătraşcu and Thorup, 2010): for some multipliers a peer's consecutive msg_ids clustered, and a removal
// walked ~6 slots instead of 1–2 (callgrind; 100 consecutive msg_ids sat 37.9 slots from home on average under the
// worst of 500 multipliers, 0.3 under the worst of 500 seeds now, `IDMapTests`). A stronger mix (SplitMix64's
// finalizer) cost ~200 instructions per call on the test server for no better spread on these keys.

private let idMapPeerSeed: UInt64 = {
    var hasher = Hasher()
    hasher.combine(0x1D_4A9 as UInt64)
    return UInt64(bitPattern: Int64(hasher.finalize()))
}()

/// A 64-bit identifier usable as an `IDMap` key.
public protocol IDMapKey: Sendable {
    /// The key's 64 bits, as the map hashes and stores them.
    var idBits: UInt64 { get }
    /// The key the bits were made from.
    init(idBits: UInt64)
}

/// Signed ids (msg_ids, session ids) as `IDMap` keys.
extension Int64: IDMapKey {
    /// The id's bit pattern.
    @inlinable public var idBits: UInt64 { UInt64(bitPattern: self) }
    /// The id with this bit pattern.
    @inlinable public init(idBits: UInt64) { self.init(bitPattern: idBits) }
}

/// Unsigned ids (auth key ids) as `IDMap` keys.
extension UInt64: IDMapKey {
    /// The id itself.
    @inlinable public var idBits: UInt64 { self }
    /// The id itself.
    @inlinable public init(idBits: UInt64) { self = idBits }
}

/// Constructor and function IDs as `IDMap` keys.
extension UInt32: IDMapKey {
    /// The id, zero-extended.
    @inlinable public var idBits: UInt64 { UInt64(self) }
    /// The low 32 bits.
    @inlinable public init(idBits: UInt64) { self.init(truncatingIfNeeded: idBits) }
}

extension RequestID: IDMapKey {
    /// The request's number.
    @inlinable public var idBits: UInt64 { value }
    /// The request with this number.
    @inlinable public init(idBits: UInt64) { self.init(idBits) }
}

/// Keys to values, in no particular order, with `Dictionary`'s everyday API.
public struct IDMap<Key: IDMapKey, Value>: Sequence {
    // Three parallel arrays of power-of-two length, so a probe reads plain words and flags and never copies (or
    // retains) a value it passes.
    @usableFromInline var ids: [UInt64]
    @usableFromInline var used: [Bool]
    @usableFromInline var slots: [Value?]
    @usableFromInline var shift: UInt64
    /// Fibonacci hashing's multiplier, or (tests) another odd one.
    @usableFromInline let multiplier: UInt64
    /// XORed into every key first: 0 for keys we make, random per process for keys a peer chooses.
    @usableFromInline let seed: UInt64
    @usableFromInline var _count = 0

    /// Fibonacci hashing's multiplier (2^64 / golden ratio).
    public static var fixedMultiplier: UInt64 { 0x9E37_79B9_7F4A_7C15 }

    /// The seed of peer-keyed maps: random per process (drawn from `Hasher`'s seed, as `Dictionary`'s order is),
    /// not from a session's injected randomness, whose sequence tests replay.
    public static var peerSeed: UInt64 { idMapPeerSeed }

    /// An empty map hashing by multiply-shift with `multiplier` (made odd): for keys we choose ourselves.
    @inlinable public init(multiplier: UInt64 = IDMap.fixedMultiplier) {
        self.init(multiplier: multiplier | 1, seed: 0)
    }

    /// An empty map for keys a peer chooses: XORed with `seed`, then Fibonacci-hashed.
    @inlinable public init(peerSeed seed: UInt64) {
        self.init(multiplier: IDMap.fixedMultiplier, seed: seed)
    }

    @inlinable init(multiplier: UInt64, seed: UInt64) {
        self.multiplier = multiplier
        self.seed = seed
        // Nothing allocated until the first insert: a session holds several maps that often stay empty.
        ids = []
        used = []
        slots = []
        shift = 64 - 3
    }

    /// How many entries the map holds.
    @inlinable public var count: Int { _count }
    /// Whether the map holds no entry.
    @inlinable public var isEmpty: Bool { _count == 0 }

    @inlinable func home(_ bits: UInt64) -> Int {
        Int(truncatingIfNeeded: ((bits ^ seed) &* multiplier) >> shift)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    @inlinable func find(_ key: Key) -> (index: Int, found: Bool) {
        let bits = key.idBits
        guard !used.isEmpty else { return (0, false) }
        let mask = used.count - 1
        var index = home(bits)
        while used[index] {
            if ids[index] == bits { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    /// The value stored for `key`, or nil; setting nil removes the entry. Lookups take constant time on average.
    public subscript(key: Key) -> Value? {
        // A copy of the value (reading one field through it copies the whole value); `modify` works in place.
        @inlinable get {
            let (index, found) = find(key)
            return found ? slots[index] : nil
        }
        @inlinable set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
        @inlinable _modify {
            let (index, found) = find(key)
            // Moved out while the caller changes it, so a value with arrays inside is not copied.
            var value = found ? slots[index].take() : nil
            defer {
                switch (found, value) {
                    case (true, let value?): slots[index] = value
                    case (true, nil): closeGap(at: index)
                    case (false, let value?): insert(value, forKey: key, at: index)
                    case (false, nil): break
                }
            }
            yield &value
        }
    }

    /// Runs `body` on the value for `key` in place (nil without one): several changes, or a check and changes, in
    /// one lookup and without copying the value.
    @inlinable public mutating func modify<R>(_ key: Key, _ body: (inout Value) throws -> R) rethrows -> R? {
        let (index, found) = find(key)
        guard found, var value = slots[index].take() else { return nil }
        defer { slots[index] = value }
        return try body(&value)
    }

    /// Sets the value for `key`; returns the old one.
    @inlinable @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let (index, found) = find(key)
        if found {
            let old = slots[index].take()
            slots[index] = value
            return old
        }
        insert(value, forKey: key, at: index)
        return nil
    }

    /// Removes `key`; returns its value.
    @inlinable @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let (index, found) = find(key)
        guard found else { return nil }
        let old = slots[index].take()
        closeGap(at: index)
        return old
    }

    /// Removes every entry; `keepingCapacity` keeps the slots for reuse.
    @inlinable public mutating func removeAll(keepingCapacity: Bool = false) {
        _count = 0
        let size = keepingCapacity ? used.count : 0
        ids = Array(repeating: 0, count: size)
        used = Array(repeating: false, count: size)
        slots = Array(repeating: nil, count: size)
        if !keepingCapacity { shift = 64 - 3 }
    }

    /// Puts a new key in the empty slot `find` returned, growing first (load ≤ 3/4) if needed.
    @inlinable mutating func insert(_ value: Value, forKey key: Key, at index: Int) {
        var index = index
        if (_count + 1) * 4 > used.count * 3 {
            grow()
            index = find(key).index
        }
        ids[index] = key.idBits
        used[index] = true
        slots[index] = value
        _count += 1
    }

    @usableFromInline mutating func grow() { rehash(size: used.isEmpty ? 8 : used.count * 2) }

    /// Gives back the slots a map that once held many entries no longer needs: the smallest table that holds
    /// `count` entries within the load bound, or none when empty (a session left without a connection keeps its
    /// maps at their size, not at their peak's).
    public mutating func shrinkToFit() {
        guard _count > 0 else {
            if !used.isEmpty { removeAll() }
            return
        }
        var size = 8
        while _count * 4 > size * 3 { size *= 2 }
        if size < used.count { rehash(size: size) }
    }

    /// Moves every entry into a table of `size` slots (a power of two holding `count` within the load bound).
    @usableFromInline mutating func rehash(size: Int) {
        var oldIDs: [UInt64] = Array(repeating: 0, count: size)
        var oldUsed: [Bool] = Array(repeating: false, count: size)
        var oldSlots: [Value?] = Array(repeating: nil, count: size)
        swap(&oldIDs, &ids)
        swap(&oldUsed, &used)
        swap(&oldSlots, &slots)
        shift = UInt64(64 - size.trailingZeroBitCount)
        let mask = size - 1
        for old in oldUsed.indices where oldUsed[old] {
            var index = home(oldIDs[old])
            while used[index] { index = (index + 1) & mask }
            ids[index] = oldIDs[old]
            used[index] = true
            slots[index] = oldSlots[old].take()
        }
    }

    /// Slot `gap` was just emptied: later entries of its probe run move back so every entry stays reachable from
    /// its home slot without passing an empty one.
    @inlinable mutating func closeGap(at gap: Int) {
        _count -= 1
        let mask = used.count - 1
        var gap = gap
        var index = gap
        used[gap] = false
        while true {
            index = (index + 1) & mask
            guard used[index] else { return }
            let home = home(ids[index])
            // The entry may move to the gap unless its home lies cyclically in (gap, index].
            let movable = gap <= index ? (home <= gap || home > index) : (home <= gap && home > index)
            if movable {
                ids[gap] = ids[index]
                used[gap] = true
                slots[gap] = slots[index].take()
                used[index] = false
                gap = index
            }
        }
    }

    /// Every key, in slot order (not sorted, not insertion order).
    @inlinable public var keys: [Key] { map(\.key) }
    /// Every value, in the same order as ``keys``.
    @inlinable public var values: [Value] { map(\.value) }

    /// Walks the entries in slot order.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let map: IDMap
        @usableFromInline var index = 0

        @inlinable init(map: IDMap) { self.map = map }

        /// The next entry, or nil after the last.
        @inlinable public mutating func next() -> (key: Key, value: Value)? {
            while index < map.used.count {
                defer { index += 1 }
                if map.used[index], let value = map.slots[index] { return (Key(idBits: map.ids[index]), value) }
            }
            return nil
        }
    }

    /// An iterator over the entries in slot order.
    @inlinable public func makeIterator() -> Iterator { Iterator(map: self) }
}

extension IDMap: Sendable where Value: Sendable {}
extension IDMap.Iterator: Sendable where Value: Sendable {}

// A message-shaped TL type written the way the generator emits code, so the runtime benchmarks measure the calls
// generated code makes (not a synthetic loop over primitives):
//
//   benchMessage#5bb8e511 flags:# id:int from_id:long peer_id:long date:int message:string
//       entities:flags.0?Vector<long> media:flags.1?BenchPhoto = BenchMessage;
//   benchPhoto#7d6b1d03 id:long access_hash:long file_reference:bytes dc_id:int = BenchPhoto;
//   benchMessages#8c718e87 messages:Vector<BenchMessage> = BenchMessages;
import TLRuntime

final class BenchPhoto: Sendable, TLParsable, TLSerializable {
    let id: Int64, accessHash: Int64, fileReference: [UInt8], dcID: Int32

    init(id: Int64, accessHash: Int64, fileReference: [UInt8], dcID: Int32) {
        self.id = id
        self.accessHash = accessHash
        self.fileReference = fileReference
        self.dcID = dcID
    }

    static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> BenchPhoto {
        let at = reader.offset
        let id = try reader.readUInt32()
        guard id == 0x7d6b_1d03 else { throw TLDecodingError(.unknownConstructor(id, type: "BenchPhoto"), offset: at) }
        try reader.enterObject()
        defer { reader.leaveObject() }
        var index = 0
        do {
            let id = try reader.readInt64()
            index = 1
            let accessHash = try reader.readInt64()
            index = 2
            let fileReference = try reader.readTLBytes()
            index = 3
            let dcID = try reader.readInt32()
            return BenchPhoto(id: id, accessHash: accessHash, fileReference: fileReference, dcID: dcID)
        } catch {
            throw error.inside(constructor: "benchPhoto", fields: "id,access_hash,file_reference,dc_id", index: index)
        }
    }

    func serialize(_ buffer: Buffer, _ boxed: Bool) {
        if boxed { buffer.appendUInt32(0x7d6b_1d03) }
        buffer.appendInt64(id)
        buffer.appendInt64(accessHash)
        buffer.appendTLBytes(fileReference)
        buffer.appendInt32(dcID)
    }
}

final class BenchMessage: Sendable, TLParsable, TLSerializable {
    let id: Int32, fromID: Int64, peerID: Int64, date: Int32, message: String
    let entities: [Int64]?, media: BenchPhoto?

    init(id: Int32, fromID: Int64, peerID: Int64, date: Int32, message: String, entities: [Int64]?,
         media: BenchPhoto?) {
        self.id = id
        self.fromID = fromID
        self.peerID = peerID
        self.date = date
        self.message = message
        self.entities = entities
        self.media = media
    }

    static func parse(_ reader: inout BufferReader) throws(TLDecodingError) -> BenchMessage {
        let at = reader.offset
        let cid = try reader.readUInt32()
        guard cid == 0x5bb8_e511 else {
            throw TLDecodingError(.unknownConstructor(cid, type: "BenchMessage"), offset: at)
        }
        try reader.enterObject()
        defer { reader.leaveObject() }
        var index = 0
        do {
            let flags = try reader.readInt32()
            index = 1
            let id = try reader.readInt32()
            index = 2
            let fromID = try reader.readInt64()
            index = 3
            let peerID = try reader.readInt64()
            index = 4
            let date = try reader.readInt32()
            index = 5
            let message = try reader.readTLString()
            index = 6
            let entities: [Int64]? = if flags & 0x1 != 0 { try reader.readVector(boxed: true, of: Int64.self) } else { nil }
            index = 7
            let media: BenchPhoto? = if flags & 0x2 != 0 { try BenchPhoto.parse(&reader) } else { nil }
            return BenchMessage(id: id, fromID: fromID, peerID: peerID, date: date, message: message,
                                entities: entities, media: media)
        } catch {
            throw error.inside(constructor: "benchMessage",
                               fields: "flags,id,from_id,peer_id,date,message,entities,media", index: index)
        }
    }

    func serialize(_ buffer: Buffer, _ boxed: Bool) {
        if boxed { buffer.appendUInt32(0x5bb8_e511) }
        var flags: Int32 = 0
        if entities != nil { flags |= 0x1 }
        if media != nil { flags |= 0x2 }
        buffer.appendInt32(flags)
        buffer.appendInt32(id)
        buffer.appendInt64(fromID)
        buffer.appendInt64(peerID)
        buffer.appendInt32(date)
        buffer.appendTLString(message)
        if let entities { buffer.appendVector(entities, boxed: true) }
        if let media { media.serialize(buffer, true) }
    }
}

/// `benchMessages` with `count` messages of about 200 bytes each, half of them with media.
func benchMessages(count: Int) -> [BenchMessage] {
    (0..<count).map { i in
        let text = "Message number \(i): the quick brown fox jumps over the lazy dog — ünïcödé ✓ " + String(i * 7919)
        let entities: [Int64]? = i % 3 == 0 ? [Int64(i), 5, 12] : nil
        var media: BenchPhoto?
        if i % 2 == 0 {
            media = BenchPhoto(id: Int64(i) << 20, accessHash: -Int64(i),
                               fileReference: [UInt8](repeating: 0x5a, count: 29), dcID: 2)
        }
        return BenchMessage(id: Int32(i), fromID: 1_000_000 + Int64(i), peerID: -1_001_234_567_890,
                            date: 1_700_000_000 + Int32(i), message: text, entities: entities, media: media)
    }
}

/// Serializes the `benchMessages` wrapper.
func serializeMessages(_ messages: [BenchMessage], into buffer: Buffer) {
    buffer.appendUInt32(0x8c71_8e87)
    buffer.appendVector(messages, boxed: true)
}

/// Parses the `benchMessages` wrapper.
func parseMessages(_ reader: inout BufferReader) throws(TLDecodingError) -> [BenchMessage] {
    let at = reader.offset
    let id = try reader.readUInt32()
    guard id == 0x8c71_8e87 else { throw TLDecodingError(.unknownConstructor(id, type: "BenchMessages"), offset: at) }
    return try reader.readVector(boxed: true, of: BenchMessage.self)
}

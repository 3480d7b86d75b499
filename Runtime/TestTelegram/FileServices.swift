// Uploads and downloads as core.telegram.org/api/files describes them: parts of at most 512 KiB whose size divides
// 512 KiB (the last may be shorter), `inputFile` with an MD5 checksum for small files and `inputFileBig` for files
// over 10 MB, and `upload.getFile` with its offset and limit rules. A document lives on the DC it was uploaded to; a
// download asked of another DC is answered FILE_MIGRATE_X.
import Foundation
import MTProto
import MTProtoCrypto
import MTProtoServer
import TLRuntime
import TelegramApi
import TelegramApiServer

extension TestTelegramService {
    static let maxPartSize = 512 * 1024
    static let maxParts: Int32 = 8000
    static let smallFileLimit = 10 * 1024 * 1024

    func registerFiles(into handlers: inout RPCHandlers) {
        handlers.on(Api.functions.upload.SaveFilePart.self) { [self] call, request throws(RPCError) in
            try savePart(call, fileID: request.fileId, part: request.filePart, bytes: request.bytes, totalParts: nil)
        }
        handlers.on(Api.functions.upload.SaveBigFilePart.self) { [self] call, request throws(RPCError) in
            try saveBigFilePart(call, request)
        }
        handlers.onWritingResult(Api.functions.upload.GetFile.self) { [self] call, request throws(RPCError) in
            try getFile(call, request)
        }
    }

    /// `upload.saveBigFilePart`, for a test that wraps it in a handler of its own.
    package func saveBigFilePart(_ call: RPCCall, _ request: Api.functions.upload.SaveBigFilePart)
        throws(RPCError) -> Bool {
        // -1: a streamed upload whose size is not known yet (core.telegram.org/api/files#streamed-uploads).
        let total = request.fileTotalParts
        guard total == -1 || (1...Self.maxParts).contains(total) else {
            throw RPCError(code: 400, message: "FILE_PARTS_INVALID")
        }
        return try savePart(call, fileID: request.fileId, part: request.filePart, bytes: request.bytes,
                            totalParts: total)
    }

    /// `upload.getFile`'s answer as a value, for a test that wraps it in a handler of its own.
    package func getFileAnswer(_ call: RPCCall, _ request: Api.functions.upload.GetFile)
        throws(RPCError) -> Api.upload.File {
        var reader = BufferReader(bytes: try getFile(call, request))
        guard let file = try? Api.upload.File.parse(&reader) else {
            throw RPCError(code: 500, message: "FILE_ANSWER_UNREADABLE")
        }
        return file
    }

    private func savePart(_ call: RPCCall, fileID: Int64, part: Int32, bytes: [UInt8],
                          totalParts: Int32?) throws(RPCError) -> Bool {
        let me = try caller(call)
        let known = totalParts.flatMap { $0 > 0 ? $0 : nil }
        guard part >= 0, part < (known ?? Self.maxParts) else { throw RPCError(code: 400, message: "FILE_PART_INVALID") }
        guard !bytes.isEmpty else { throw RPCError(code: 400, message: "FILE_PART_EMPTY") }
        guard bytes.count <= Self.maxPartSize else { throw RPCError(code: 400, message: "FILE_PART_TOO_BIG") }
        // A part of a big file that is not its last has the file's part size: a multiple of 1 KiB dividing 512 KiB.
        if let known, part < known - 1, bytes.count % 1024 != 0 || Self.maxPartSize % bytes.count != 0 {
            throw RPCError(code: 400, message: "FILE_PART_SIZE_INVALID")
        }
        let limit = limits.maxUploadBytesPerAccount
        let dcID = call.endpoint.dcID
        try state.withLock { state throws(RPCError) in
            try state.modify(me, missing: RPCError(code: 401, message: "AUTH_KEY_UNREGISTERED")) { account throws(RPCError) in
                // Read what the checks need as values, so the part is then stored in place, not into a copy.
                let existing = account.uploads[fileID].map { ($0.big, $0.dcID, $0.totalParts, $0.parts[part]?.count ?? 0) }
                if let (big, uploadDC, stored, _) = existing {
                    guard big == (totalParts != nil), uploadDC == dcID else { throw RPCError(code: 400, message: "FILE_PART_INVALID") }
                    if let known, let stored, known != stored {
                        throw RPCError(code: 400, message: "FILE_PARTS_INVALID")
                    }
                }
                let replaced = existing?.3 ?? 0
                guard account.uploadBytes - replaced + bytes.count <= limit else {
                    throw RPCError(code: 400, message: "FILE_PARTS_TOO_MANY_BYTES")
                }
                account.uploadBytes += bytes.count - replaced
                account.uploads[fileID, default: Upload(big: totalParts != nil, dcID: dcID)].parts[part] = bytes
                if let known { account.uploads[fileID]?.totalParts = known }
            }
        }
        recordPart(.upload(user: me, fileID: fileID), bytes: bytes.count, call: call)
        return true
    }

    /// Turns an uploaded file into a document on this DC (its parts are consumed).
    func storeDocument(from media: Api.InputMedia, _ call: RPCCall) throws(RPCError) -> Api.Document {
        let me = try caller(call)
        guard case .inputMediaUploadedDocument(let uploaded) = media else {
            throw RPCError(code: 400, message: "MEDIA_INVALID")
        }
        let id = random.int64(), accessHash = random.int64()
        let reference = random.bytes(16)
        let limits = limits
        let dcID = call.endpoint.dcID
        let document = try state.withLock { state throws(RPCError) -> StoredDocument in
            guard let account = state.accounts[me] else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
            let bytes = try account.assembleUpload(uploaded.file, dcID: dcID)
            guard state.documentBytes + bytes.count <= limits.maxStoredFileBytes else {
                throw RPCError(code: 400, message: "FILE_STORAGE_FULL")
            }
            // The thumbnail first: a bad one refuses the send before the file's upload is consumed.
            let thumbnail = try uploaded.thumb.map { thumb throws(RPCError) in
                try storeThumbnail(thumb, me: me, dcID: dcID, in: &state)
            }
            state.accounts[me]?.dropUpload(uploaded.file.id)
            let document = StoredDocument(id: id, accessHash: accessHash, fileReference: reference,
                                          dcID: dcID, date: Self.date(call), mimeType: uploaded.mimeType,
                                          attributes: uploaded.attributes, bytes: bytes, thumbnail: thumbnail)
            state.documents[id] = document
            state.documentBytes += bytes.count + (thumbnail?.bytes.count ?? 0)
            return document
        }
        return document.api
    }

    /// `upload.getFile`: offset a multiple of 4 KiB (1 KiB with `precise`), limit a multiple of 4 KiB (1 KiB) of at
    /// most 1 MiB that divides 1 MiB unless `precise`, and the chunk within one 1 MiB block.
    /// The answer is written here rather than returned as a value (see `uploadFile`).
    private func getFile(_ call: RPCCall, _ request: Api.functions.upload.GetFile) throws(RPCError) -> [UInt8] {
        let me = try caller(call)
        let location = request.location
        let offset = request.offset
        let limit = Int64(request.limit)
        let precise = request.precise
        let unit: Int64 = precise ? 1024 : 4096
        let block: Int64 = 1 << 20
        guard limit > 0, limit <= block, limit % unit == 0, precise || block % limit == 0 else {
            throw RPCError(code: 400, message: "LIMIT_INVALID")
        }
        guard offset >= 0, offset % unit == 0, offset / block == (offset + limit - 1) / block else {
            throw RPCError(code: 400, message: "OFFSET_INVALID")
        }
        // A document or its thumbnail, a photo, a profile photo, or a secret chat's encrypted file
        // (EncryptedServices.swift).
        let (bytes, dcID, date, referenceValid, file) = try state.withLock { state throws(RPCError) -> ([UInt8], Int32, Int32, Bool, TransferLog.File?) in
            switch location {
            case .inputDocumentFileLocation(let input):
                let document = try Self.stored(state.documents, id: input.id, accessHash: input.accessHash,
                                               unknown: "FILE_ID_INVALID")
                var bytes = document.bytes
                if !input.thumbSize.isEmpty {
                    // A thumbnail the sender uploaded (MediaServices.swift).
                    guard let thumbnail = document.thumbnail, thumbnail.type == input.thumbSize else {
                        throw RPCError(code: 400, message: "LOCATION_INVALID")
                    }
                    bytes = thumbnail.bytes
                }
                return (bytes, document.dcID, document.date, document.fileReference == input.fileReference,
                        input.thumbSize.isEmpty ? .document(input.id) : nil)
            case .inputPhotoFileLocation(let input):
                let photo = try photoFile(input, in: state)
                return (photo.bytes, photo.dcID, photo.date, photo.referenceValid, .photo(input.id))
            case .inputPeerPhotoFileLocation(let input):
                let photo = try profilePhotoFile(input, me: me, in: state)
                return (photo.bytes, photo.dcID, photo.date, true, .photo(input.photoId))
            case .inputEncryptedFileLocation(let input):
                let file = try state.secret.file(input.id, accessHash: input.accessHash)
                return (file.bytes, file.dcID, file.date, true, nil)
            default:
                throw RPCError(code: 400, message: "LOCATION_INVALID")
            }
        }
        guard dcID == call.endpoint.dcID else { throw RPCError(code: 303, message: "FILE_MIGRATE_\(dcID)") }
        guard referenceValid else { throw RPCError(code: 400, message: "FILE_REFERENCE_EXPIRED") }
        if case .document(let id)? = file,
           let redirect = try cdnRedirect(document: id, cdnSupported: request.cdnSupported) {
            return TestTelegram.serialized(redirect)
        }
        let start = Int(min(offset, Int64(bytes.count)))
        let end = Int(min(offset + limit, Int64(bytes.count)))
        let answer = Self.uploadFile(mtime: date, bytes: bytes[start..<end])
        if let file {
            recordPart(file, bytes: end - start, call: call)
            if let every = faults?.expireFileReferenceEvery { served(file, bytes: end - start, every: every) }
        }
        return answer
    }

    /// `upload.file#96a18d5 type:storage.fileUnknown#aa963b05 mtime:int bytes:bytes`, written straight from the
    /// stored file in one allocation: the generated value would copy a 512 KiB part into its field, then into a
    /// growing `Buffer`, then out of it, and a download is mostly those parts. TL `bytes` as the spec writes them
    /// (core.telegram.org/mtproto/serialize): a length byte below 254, else 254 and a 3-byte length; zeros to 4.
    static func uploadFile(mtime: Int32, bytes: ArraySlice<UInt8>) -> [UInt8] {
        let header = bytes.count < 254 ? 1 : 4
        let padding = (4 - (header + bytes.count) % 4) % 4
        var out = [UInt8]()
        out.reserveCapacity(12 + header + bytes.count + padding)
        for word in [0x096a_18d5, 0xaa96_3b05, UInt32(bitPattern: mtime)] as [UInt32] {
            withUnsafeBytes(of: word.littleEndian) { out.append(contentsOf: $0) }
        }
        let length = UInt32(bytes.count)
        if header == 1 {
            out.append(UInt8(length))
        } else {
            out += [254, UInt8(truncatingIfNeeded: length), UInt8(truncatingIfNeeded: length >> 8),
                    UInt8(truncatingIfNeeded: length >> 16)]
        }
        out += bytes
        out += repeatElement(0, count: padding)
        return out
    }
}

extension Account {
    /// The bytes of a finished upload made on `dcID`: every part present, all but the last the same size, a size
    /// dividing 512 KiB; the MD5 right when given; at most 10 MB unless `big`. The upload stays until `dropUpload`.
    func assembleUpload(_ fileID: Int64, parts: Int32, big: Bool, md5: String?, dcID: Int32)
        throws(RPCError) -> [UInt8] {
        guard let upload = uploads[fileID], upload.dcID == dcID, upload.big == big, parts > 0,
              upload.totalParts.map({ $0 == parts }) ?? true
        else { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(upload.parts.values.reduce(0) { $0 + $1.count })
        let first = upload.parts[0]?.count ?? 0
        for index in 0..<parts {
            guard let part = upload.parts[index] else { throw RPCError(code: 400, message: "FILE_PART_\(index)_MISSING") }
            if index < parts - 1, part.count != first || first % 1024 != 0 || TestTelegramService.maxPartSize % first != 0 {
                throw RPCError(code: 400, message: "FILE_PART_SIZE_INVALID")
            }
            bytes += part
        }
        if let md5, Hex.encode(Hash.md5(bytes)) != md5.lowercased() {
            throw RPCError(code: 400, message: "MD5_CHECKSUM_INVALID")
        }
        if !big, bytes.count > TestTelegramService.smallFileLimit { throw RPCError(code: 400, message: "FILE_PARTS_INVALID") }
        return bytes
    }

    /// Forgets an upload and the bytes it counted.
    mutating func dropUpload(_ fileID: Int64) {
        guard let upload = uploads.removeValue(forKey: fileID) else { return }
        uploadBytes -= upload.parts.values.reduce(0) { $0 + $1.count }
    }
}

extension StoredDocument {
    var api: Api.Document {
        .document(.init(id: id, accessHash: accessHash, fileReference: fileReference, date: date, mimeType: mimeType,
                        size: Int64(bytes.count), thumbs: thumbnail.map { [$0.api] }, dcId: dcID,
                        attributes: attributes))
    }
}

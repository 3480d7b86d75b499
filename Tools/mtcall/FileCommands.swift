// `mtcall upload FILE [--to PEER]` and `mtcall download LOCATION --out PATH`: files through `TelegramClient`'s
// uploads and downloads, with a progress bar on standard error when it is a terminal and plain progress lines when
// it is not. `upload --to` sends the file as a document and prints where it can be downloaded from as one JSON line:
// {"location": <tl-json InputFileLocation>, "dc": N, "size": N, "sha256": HEX, "seconds": S}; `download` takes that
// line (or a bare tl-json InputFileLocation) as its argument. "seconds" is the transfer call alone.
import ArgumentParser
import Foundation
import Logging
import MTProto
import MTProtoClient
import MTProtoCrypto
import Synchronization
import TLJSON
import TLRuntime
import TLSchema
import TelegramApi
import TelegramClient

/// The flags of `upload` and `download`.
struct FileOptions: ParsableArguments {
    @Option(help: "upload: send the file to this PEER as a document; forward: the PEER to forward to (me, @username, user:ID, channel:ID, chat:ID).")
    var to: String?

    @Option(help: "download, download-media: the file to write.")
    var out: String?

    @Option(name: .customLong("file-dc"), help: "download: the DC the file lives on (default: where FILE_MIGRATE says).")
    var fileDC: Int32?

    @Option(name: .customLong("parts-in-flight"), help: "upload, download: parts asked at once.")
    var partsInFlight: Int = 8

    @Option(name: .customLong("media-connections"), help: "upload, download: connections of their own for the parts (0: the main one).")
    var mediaConnections: Int = 2

    @Option(name: .customLong("part-size"),
            help: "upload, download: bytes per part (upload: a multiple of 1024 dividing 524288; download: a multiple of 4096 dividing 1048576; default: the client's).")
    var partSize: Int?

    @Flag(name: .customLong("no-digest"),
          help: "upload, download: leave \"sha256\" out of the JSON line, so the file is not read again (to measure the transfer's own CPU).")
    var noDigest = false
}

extension MTCall {
    /// `mtcall upload FILE [--to PEER]`.
    func runUpload(logger: Logger) async throws {
        let path = params
        guard FileManager.default.fileExists(atPath: path) else { throw ValidationError("upload: no file at \(path)") }
        let destination = try files.to.map { text throws(ValidationError) in try PeerReference(text) }
        try await withClient(logger: logger) { client in
            let progress = ProgressPrinter(verb: "uploaded")
            let started = ContinuousClock.now
            let file = try await client.upload(path: path, options: transferOptions(progress))
            let seconds = Self.seconds(since: started)
            progress.finish()
            guard let destination else {
                print(TLJSONWriter.json(file).description)
                return
            }
            let peer = try await destination.inputPeer(client)
            let sent = try await client.invoke(Api.functions.messages.sendMedia(
                peer: peer, media: .uploadedDocument(file), message: "", randomId: Int64.random(in: 1...Int64.max)))
            guard let document = Self.document(in: sent) else {
                throw MTProtoClientError.rpc(RPCError(code: 400, message: "NO_DOCUMENT_IN_ANSWER"))
            }
            let location = Api.InputFileLocation.inputDocumentFileLocation(.init(
                id: document.id, accessHash: document.accessHash, fileReference: document.fileReference, thumbSize: ""))
            print("{\"location\": \(TLJSONWriter.json(location).description), \"dc\": \(document.dcId), "
                  + "\"size\": \(document.size), \(try digestMember(path))\"seconds\": \(seconds)}")
        }
    }

    /// `mtcall download LOCATION --out PATH`: LOCATION is `upload --to`'s line or a tl-json InputFileLocation.
    func runDownload(logger: Logger) async throws {
        guard let out = files.out else { throw ValidationError("download: --out PATH is required") }
        guard case .object(let members) = try parse(params, what: "LOCATION") else {
            throw ValidationError("LOCATION must be a JSON object")
        }
        var locationJSON = JSONValue.object(members)
        var dc = files.fileDC
        var size: Int64?
        if let inner = members.first(where: { $0.0 == "location" })?.1 {
            locationJSON = inner
            for (name, value) in members {
                if name == "dc", case .number(let number) = value { dc = dc ?? Int32(number) }
                if name == "size", case .number(let number) = value { size = Int64(number) }
            }
        }
        let schema = Checker.check(file: "api.tl", text: Api.schemaSource)
        let location: Api.InputFileLocation
        do {
            let bytes = try TLJSONEncoder(schemas: [schema]).encode(locationJSON)
            var reader = BufferReader(bytes: bytes)
            location = try Api.InputFileLocation.parse(&reader)
        } catch {
            throw ValidationError("LOCATION: \(error)")
        }
        try await withClient(logger: logger) { client in
            let progress = ProgressPrinter(verb: "downloaded")
            let started = ContinuousClock.now
            let written = try await client.download(location, to: out, dc: dc, size: size,
                                                    options: transferOptions(progress))
            let seconds = Self.seconds(since: started)
            progress.finish()
            print("{\"path\": \"\(out)\", \"size\": \(written), \(try digestMember(out))\"seconds\": \(seconds)}")
        }
    }

    /// `"sha256": "HEX", ` of the file at `path`, or nothing with --no-digest.
    private func digestMember(_ path: String) throws -> String {
        files.noDigest ? "" : "\"sha256\": \"\(Hex.encode(try Self.sha256(path: path)))\", "
    }

    private func transferOptions(_ progress: ProgressPrinter) -> FileTransferOptions {
        FileTransferOptions(partsInFlight: files.partsInFlight, mediaConnections: files.mediaConnections,
                            partSize: files.partSize, progress: { progress.show($0) })
    }

    /// A client signed in when --phone is given, closed after `body`; errors printed as the one-shot call does.
    private func withClient(logger: Logger, _ body: (TelegramClient) async throws -> Void) async throws {
        let (client, store) = try await makeClient(logger: logger, followsUpdates: false)
        var failure: (any Error)?
        do {
            if let phone, let code { try await signIn(client, phone: phone, code: code, store: store) }
            try await body(client)
        } catch {
            failure = error
        }
        await client.close()
        try await store?.close()
        if let failure { try fail(failure) }
    }

    static func document(in updates: Api.Updates) -> Api.Document.Cons_document? {
        guard case .updates(let all) = updates else { return nil }
        for case .updateNewMessage(let new) in all.updates {
            if case .message(let message) = new.message, case .messageMediaDocument(let media)? = message.media,
               case .document(let document)? = media.document { return document }
        }
        return nil
    }

    /// Seconds from `start` to now, for the JSON lines: the transfer alone, without the process's start, sign-in and
    /// the hash of the file.
    static func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start) / .seconds(1) }

    /// The SHA-256 of a file, read 1 MiB at a time.
    static func sha256(path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw ValidationError("cannot read \(path)") }
        defer { try? handle.close() }
        let hasher = SHA256Stream()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update([UInt8](chunk)) }
        return hasher.finish()
    }
}

/// Progress on standard error: a bar redrawn in place on a terminal, else a line each 10 %.
final class ProgressPrinter: Sendable {
    private let verb: String
    private let terminal = isatty(STDERR_FILENO) != 0
    private let state = Mutex<(started: ContinuousClock.Instant, lastShown: Int, last: TransferProgress?)>(
        (ContinuousClock.now, -1, nil))

    init(verb: String) { self.verb = verb }

    func show(_ progress: TransferProgress) {
        let line: String? = state.withLock { state in
            state.last = progress
            let seconds = max(0.001, (ContinuousClock.now - state.started) / .seconds(1))
            let rate = Double(progress.bytesDone) / seconds / 1_048_576
            guard let total = progress.totalBytes, total > 0 else {
                return terminal ? String(format: "\r%@ %.1f MB (%.1f MB/s)", verb,
                                         Double(progress.bytesDone) / 1_048_576, rate) : nil
            }
            let percent = Int(progress.bytesDone * 100 / total)
            if terminal {
                let filled = percent * 30 / 100
                let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
                return String(format: "\r[%@] %3d%% %.1f/%.1f MB %.1f MB/s", bar, percent,
                              Double(progress.bytesDone) / 1_048_576, Double(total) / 1_048_576, rate)
            }
            guard percent / 10 > state.lastShown else { return nil }
            state.lastShown = percent / 10
            return "\(verb) \(progress.bytesDone)/\(total) bytes (\(percent)%)\n"
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// Ends the bar's line on a terminal.
    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

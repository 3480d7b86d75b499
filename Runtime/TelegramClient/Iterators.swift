// The AsyncSequences over a chat's history, the dialogs and a search (made by `TelegramClient.history`, `search`
// and `dialogs`, TelegramClient+Messages.swift), each paging by its method's offsets
// (core.telegram.org/api/offsets): a page asks for the messages past the previous page's last one, the sequence ends
// at the first short or empty page, flood waits are waited out, and every page's users and chats reach the peer cache
// (through `invoke`).
import MTProto
import TLRuntime
import MTProtoClient
import TelegramApi

/// Where a history starts.
public enum HistoryStart: Sendable, Equatable {
    /// The newest message (or, reversed, the oldest).
    case newest
    /// Messages older than this id (reversed: newer).
    case id(Int32)
    /// Messages older than this date, Unix seconds (reversed: at or after it).
    case date(Int32)
}

/// How an iterator pages and waits.
public struct PagingOptions: Sendable {
    /// Items asked per call (1…100: Telegram's most).
    public var pageSize: Int
    /// Items yielded at most (nil: until the end).
    public var limit: Int?
    /// A flood wait longer than this many seconds is thrown instead of waited out.
    public var maxFloodWait: Int
    /// Flood waits in a row waited out for one page before the last is thrown.
    public var maxFloodWaits: Int

    /// Pages of `pageSize`, at most `limit` items, flood waits up to `maxFloodWait` seconds waited out.
    public init(pageSize: Int = 100, limit: Int? = nil, maxFloodWait: Int = 300, maxFloodWaits: Int = 10) {
        self.pageSize = min(100, max(1, pageSize))
        self.limit = limit
        self.maxFloodWait = maxFloodWait
        self.maxFloodWaits = maxFloodWaits
    }
}

/// Messages of a chat's history or a search, fetched a page at a time.
public struct MessageSequence: AsyncSequence, Sendable {
    /// Each message, as `messages.getHistory` or `messages.search` returned it.
    public typealias Element = Api.Message

    enum Source: Sendable {
        case history(Api.InputPeer)
        case search(Api.InputPeer, String)
    }

    let client: TelegramClient
    let source: Source
    let start: HistoryStart
    let reverse: Bool
    let options: PagingOptions

    /// A fresh pass from the start.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    /// Pages through the sequence's method.
    public struct Iterator: AsyncIteratorProtocol {
        let sequence: MessageSequence
        var buffer: [Api.Message] = []
        var ended = false
        var yielded = 0
        /// The last id yielded: the next page starts past it, and nothing at or before it is yielded again.
        var last: Int32?

        init(sequence: MessageSequence) { self.sequence = sequence }

        /// The next message, fetching a page when the last one is used up; nil at the end.
        public mutating func next() async throws -> Api.Message? {
            if let limit = sequence.options.limit, yielded >= limit { return nil }
            while buffer.isEmpty {
                guard !ended else { return nil }
                try await fetch()
            }
            let message = buffer.removeFirst()
            last = message.id
            yielded += 1
            return message
        }

        private mutating func fetch() async throws {
            let size = Int32(sequence.options.pageSize)
            var offsetID: Int32 = 0, offsetDate: Int32 = 0, addOffset: Int32 = 0
            if let last {
                offsetID = sequence.reverse ? last &+ 1 : last
            } else {
                switch sequence.start {
                    case .newest: offsetID = sequence.reverse ? 1 : 0
                    case .id(let id): offsetID = sequence.reverse ? id &+ 1 : id
                    case .date(let date): offsetDate = date
                }
            }
            // Reversed, the page is the `size` messages just newer than offset_id (or at or after offset_date).
            if sequence.reverse { addOffset = -size }
            let client = sequence.client, options = sequence.options
            let result: Api.messages.Messages = switch sequence.source {
                case .history(let peer):
                    try await client.invokeWaiting(Api.functions.messages.getHistory(
                        peer: peer, offsetId: offsetID, offsetDate: offsetDate, addOffset: addOffset, limit: size,
                        maxId: 0, minId: 0, hash: 0), options: options)
                case .search(let peer, let query):
                    try await client.invokeWaiting(Api.functions.messages.search(
                        peer: peer, q: query, filter: .inputMessagesFilterEmpty, minDate: 0, maxDate: 0, offsetId: offsetID,
                        addOffset: addOffset, limit: size, maxId: 0, minId: 0, hash: 0), options: options)
            }
            let page = MessagePage(result).messages.filter { !$0.isEmpty }
            // A short page is the last; so is a whole list (not a slice) or one that moved nowhere.
            ended = page.count < Int(size)
            var ordered = page.sorted { sequence.reverse ? $0.id < $1.id : $0.id > $1.id }
            if let last { ordered.removeAll { sequence.reverse ? $0.id <= last : $0.id >= last } }
            if case .date(let date) = sequence.start, self.last == nil, sequence.reverse {
                ordered.removeAll { $0.date < date }
            }
            if ordered.isEmpty { ended = true }
            buffer = ordered
        }
    }
}

/// One dialog of `TelegramClient.dialogs`.
public struct DialogItem: Sendable {
    /// The dialog as Telegram returned it.
    public let dialog: Api.Dialog
    /// The user, group or channel the dialog is with.
    public let peer: PeerID
    /// Its top message, when the page carried it.
    public let topMessage: Api.Message?
    /// Pinned at the top of its folder.
    public var pinned: Bool { Self.isPinned(dialog) }

    static func isPinned(_ dialog: Api.Dialog) -> Bool {
        switch dialog {
            case .dialog(let d): d.pinned
            case .dialogFolder(let f): f.pinned
            case .dialogCommunity(let c): c.pinned
        }
    }

    /// The dialog's peer and top message id (nil for a community, which names no peer).
    static func anchor(_ dialog: Api.Dialog) -> (peer: PeerID, top: Int32)? {
        switch dialog {
            case .dialog(let d): (PeerID(d.peer), d.topMessage)
            case .dialogFolder(let f): (PeerID(f.peer), f.topMessage)
            case .dialogCommunity: nil
        }
    }
}

/// The dialogs, fetched a page at a time with `messages.getDialogs`.
public struct DialogSequence: AsyncSequence, Sendable {
    /// Each dialog with its peer and top message.
    public typealias Element = DialogItem

    let client: TelegramClient
    let folder: Int32?
    let excludePinned: Bool
    let options: PagingOptions

    /// A fresh pass from the first page.
    public func makeAsyncIterator() -> Iterator { Iterator(sequence: self) }

    /// Pages by the last dialog's top message date, id and peer.
    public struct Iterator: AsyncIteratorProtocol {
        let sequence: DialogSequence
        var buffer: [DialogItem] = []
        var ended = false
        var yielded = 0
        var seen: Set<PeerID> = []
        var offset: (date: Int32, id: Int32, peer: Api.InputPeer) = (0, 0, .inputPeerEmpty)
        /// Pinned dialogs come on the first page only: later pages leave them out and start after the last
        /// unpinned dialog (a page of pinned ones only is followed by the unpinned from the top).
        var excludePinned: Bool

        init(sequence: DialogSequence) {
            self.sequence = sequence
            excludePinned = sequence.excludePinned
        }

        /// The next dialog, fetching a page when the last one is used up; nil at the end.
        public mutating func next() async throws -> DialogItem? {
            if let limit = sequence.options.limit, yielded >= limit { return nil }
            while buffer.isEmpty {
                guard !ended else { return nil }
                try await fetch()
            }
            yielded += 1
            return buffer.removeFirst()
        }

        private mutating func fetch() async throws {
            let size = Int32(sequence.options.pageSize)
            let result = try await sequence.client.invokeWaiting(Api.functions.messages.getDialogs(
                excludePinned: excludePinned, folderId: sequence.folder, offsetDate: offset.date,
                offsetId: offset.id, offsetPeer: offset.peer, limit: size, hash: 0), options: sequence.options)
            let dialogs: [Api.Dialog], messages: [Api.Message], whole: Bool
            switch result {
                case .dialogs(let d): (dialogs, messages, whole) = (d.dialogs, d.messages, true)
                case .dialogsSlice(let d): (dialogs, messages, whole) = (d.dialogs, d.messages, false)
                case .dialogsNotModified: (dialogs, messages, whole) = ([], [], true)
            }
            var tops: [PeerID: [Int32: Api.Message]] = [:]
            for message in messages {
                guard let peer = message.peer else { continue }
                tops[peer, default: [:]][message.id] = message
            }
            var items: [DialogItem] = []
            for dialog in dialogs {
                guard let (peer, top) = DialogItem.anchor(dialog) else { continue }
                // A pinned dialog may come again on a later page: each once.
                guard seen.insert(peer).inserted else { continue }
                items.append(DialogItem(dialog: dialog, peer: peer, topMessage: tops[peer]?[top]))
            }
            ended = whole || dialogs.count < Int(size)
            let unpinned = dialogs.filter { !DialogItem.isPinned($0) }.compactMap(DialogItem.anchor)
            if !ended, let (peer, top) = unpinned.last {
                // A dialog without its top message (or a peer the cache cannot name) gives no offset to go on from.
                guard let message = tops[peer]?[top], let input = try? await sequence.client.inputPeer(for: peer) else {
                    ended = true
                    buffer = items
                    return
                }
                offset = (message.date, top, input)
            } else if !ended, excludePinned {
                // A page with no unpinned dialog after the pinned ones were left out: nothing moves, so stop.
                ended = true
            }
            excludePinned = true
            if items.isEmpty && dialogs.isEmpty { ended = true }
            buffer = items
        }
    }
}

extension Api.Message {
    /// The message's id.
    var id: Int32 {
        switch self {
            case .message(let m): m.id
            case .messageService(let m): m.id
            case .messageEmpty(let m): m.id
        }
    }

    /// The message's date (0 for an empty one).
    var date: Int32 {
        switch self {
            case .message(let m): m.date
            case .messageService(let m): m.date
            case .messageEmpty: 0
        }
    }

    /// The chat it is in.
    var peer: PeerID? {
        switch self {
            case .message(let m): PeerID(m.peerId)
            case .messageService(let m): PeerID(m.peerId)
            case .messageEmpty(let m): m.peerId.map(PeerID.init)
        }
    }

    var isEmpty: Bool {
        if case .messageEmpty = self { return true }
        return false
    }
}

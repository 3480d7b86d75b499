// The typed side of message operations: a message as the SDK hands it back (read from the `Api.Message` Telegram
// sent, which it keeps), what a send may ask for, and the errors the operations throw before or instead of Telegram's
// own. Media and albums are fields of the same message (`media`, `groupedID`), so what sends them later returns this
// type too.
import TelegramApi
import TelegramFormatting

/// A message of a chat: its id, chat, sender, text and the rest an app reads, with the message as Telegram sent it.
///
/// Ids are the chat's as this account sees them: in private chats and basic groups each account numbers the
/// messages of all its chats in one sequence of its own, in a channel the channel numbers them
/// (core.telegram.org/api/updates).
public struct ChatMessage: Sendable {
    /// The message as Telegram sent it.
    public let message: Api.Message
    /// Its id in ``chat``.
    public let id: Int32
    /// The chat it is in: the other user of a private chat (this account's own user for Saved Messages), the
    /// group or the channel.
    public let chat: PeerID
    /// Who sent it; nil for a channel post without a signature, and for this account's own messages when Telegram
    /// left the sender out.
    public let sender: PeerID?
    /// When it was sent (when it will be, for a scheduled message), Unix seconds.
    public let date: Int32
    /// Its text (a media message's caption); empty for a service message.
    public let text: String
    /// The formatting of ``text``, offsets in UTF-16 code units (core.telegram.org/api/entities).
    public let entities: [Api.MessageEntity]
    /// Sent by this account.
    public let isOutgoing: Bool
    /// When it was last edited, Unix seconds; nil when it never was.
    public let editDate: Int32?
    /// The message it answers, in the same chat.
    public let replyToID: Int32?
    /// Where a forwarded message came from; nil for a message that is not a forward, or one forwarded without its
    /// author (`drop_author`).
    public let forwardHeader: Api.MessageFwdHeader?
    /// A photo, document, location or other media, when it has one.
    public let media: Api.MessageMedia?
    /// The album the message belongs to: the messages of one album share it.
    public let groupedID: Int64?
    /// Pinned in its chat.
    public let isPinned: Bool
    /// Sent without a notification.
    public let isSilent: Bool
    /// Scheduled: it waits in the chat's scheduled messages until ``date``.
    public let isScheduled: Bool
    /// What a service message records (a pin, a member added…); nil for an ordinary message.
    public let action: Api.MessageAction?

    /// The message `message` is; nil for `messageEmpty` (what Telegram sends for an id that has no message).
    /// - Parameters:
    ///   - message: The message as Telegram sent it.
    ///   - isScheduled: Whether it came as a scheduled message (`updateNewScheduledMessage`,
    ///     `messages.getScheduledMessages`): the message itself does not say.
    public init?(_ message: Api.Message, isScheduled: Bool = false) {
        self.message = message
        self.isScheduled = isScheduled
        switch message {
            case .message(let m):
                (id, chat, date, text, isOutgoing) = (m.id, PeerID(m.peerId), m.date, m.message, m.out)
                // A private chat's incoming messages carry only the peer (layer 119 on): the peer sent them.
                sender = m.fromId.map(PeerID.init) ?? (m.peerId.isUser && !m.out ? PeerID(m.peerId) : nil)
                entities = m.entities ?? []
                editDate = m.editDate
                replyToID = m.replyTo?.messageID
                forwardHeader = m.fwdFrom
                media = m.media
                groupedID = m.groupedId
                isPinned = m.pinned
                isSilent = m.silent
                action = nil
            case .messageService(let m):
                (id, chat, date, text, isOutgoing) = (m.id, PeerID(m.peerId), m.date, "", m.out)
                sender = m.fromId.map(PeerID.init) ?? (m.peerId.isUser && !m.out ? PeerID(m.peerId) : nil)
                entities = []
                editDate = nil
                replyToID = m.replyTo?.messageID
                (forwardHeader, media, groupedID) = (nil, nil, nil)
                isPinned = false
                isSilent = m.silent
                action = m.action
            case .messageEmpty:
                return nil
        }
    }

    /// ``text`` with its ``entities``, to write back as HTML or MarkdownV2.
    public var formatted: FormattedText { FormattedText(text: text, entities: entities) }
}

/// What a send asks of Telegram beyond the text.
public struct SendOptions: Sendable, Equatable {
    /// Sends without a notification.
    public var silent: Bool
    /// Sends without a link preview.
    public var noWebpage: Bool
    /// The message in the same chat this one answers.
    public var replyTo: Int32?
    /// Schedules the message for this time, Unix seconds, instead of sending it now: it waits in the chat's
    /// scheduled messages (core.telegram.org/api/scheduled-messages).
    public var scheduleDate: Int32?
    /// A bot's keyboard for the message (Telegram drops a user's): checked against Telegram's bounds before the send.
    public var replyMarkup: ReplyMarkup?

    /// A send now, with a notification and a link preview, answering nothing unless `replyTo` says.
    public init(silent: Bool = false, noWebpage: Bool = false, replyTo: Int32? = nil, scheduleDate: Int32? = nil) {
        self.silent = silent
        self.noWebpage = noWebpage
        self.replyTo = replyTo
        self.scheduleDate = scheduleDate
    }

    /// A send with a bot's keyboard.
    public init(replyMarkup: ReplyMarkup?, silent: Bool = false, replyTo: Int32? = nil) {
        self.init(silent: silent, replyTo: replyTo)
        self.replyMarkup = replyMarkup
    }
}

/// Why a message operation failed, when the message or the answer is what is wrong. Unknown peers throw
/// ``PeerCacheError/unknownPeer(_:)`` before anything is sent; other refusals come as `MTProtoClientError.rpc`.
public enum MessageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No message with these ids is in the chat (Telegram answered `MESSAGE_ID_INVALID`, or an id is not positive
    /// and nothing was sent).
    case notFound(ids: [Int32], chat: PeerID)
    /// An edit that changes nothing (`MESSAGE_NOT_MODIFIED`).
    case notModified(id: Int32, chat: PeerID)
    /// The message is someone else's and cannot be edited by this account (`MESSAGE_AUTHOR_REQUIRED`).
    case notAuthor(id: Int32, chat: PeerID)
    /// The text is empty once its markup is read; nothing was sent.
    case emptyText
    /// Deleting a channel's messages is for everyone: a channel has no "for me only" (nothing was sent).
    case deleteForMeInChannel(PeerID)
    /// Telegram's answer did not carry the message the call made or changed.
    case missingFromAnswer(chat: PeerID)
    /// No matching message came in the chat within the wait.
    case timedOut(chat: PeerID, after: Duration)
    /// More waits for messages are running than ``TelegramClient/TelegramClient/maxMessageWaits``.
    case tooManyWaits(limit: Int)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
            case .notFound(let ids, let chat):
                "no message \(ids.map(String.init).joined(separator: ", ")) in \(chat)"
            case .notModified(let id, let chat): "the edit of message \(id) in \(chat) changes nothing"
            case .notAuthor(let id, let chat): "message \(id) in \(chat) is not this account's to edit"
            case .emptyText: "the message text is empty"
            case .deleteForMeInChannel(let chat): "messages of \(chat) can only be deleted for everyone"
            case .missingFromAnswer(let chat): "Telegram's answer carries no message for \(chat)"
            case .timedOut(let chat, let after): "no matching message in \(chat) within \(after)"
            case .tooManyWaits(let limit): "more than \(limit) waits for messages at once"
        }
    }
}

extension Api.MessageReplyHeader {
    /// The message answered, when it is one (not a story).
    var messageID: Int32? {
        if case .messageReplyHeader(let header) = self { return header.replyToMsgId }
        return nil
    }
}

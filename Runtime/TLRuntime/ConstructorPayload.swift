// A payload printed on its own reads like the value it is the payload of. Through `CustomDebugStringConvertible`
// (which `print` and string interpolation fall back to) rather than `CustomStringConvertible`: payloads of
// constructors with a TL field named `description` (`botInfo`, `webPage`, `botCommand`) have a property of that name.

/// A constructor's payload (`Api.Message.Cons_message`): the value one case of a generated enum carries.
///
/// `print(payload)` and `"\(payload)"` show the constructor and its fields as the enum value does, with the same
/// fields redacted.
public protocol TLConstructorPayload: CustomDebugStringConvertible {
    /// The generated type whose constructor this is.
    associatedtype Boxed: TLObject
    /// The value of ``Boxed`` whose constructor this payload is.
    var tlBoxed: Boxed { get }
}

extension TLConstructorPayload {
    /// The description of ``tlBoxed``: the constructor and its fields, as ``TLLogFormatter/telegram`` writes them.
    public var debugDescription: String { tlBoxed.description }
}

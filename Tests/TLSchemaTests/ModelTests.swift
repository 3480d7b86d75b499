// The checked model: types with their constructors in order, namespaces, resolved field and result types,
// flag conditions, generics and recursion.

import Testing
@testable import TLSchema

@Suite struct ModelTests {
    static let schema = check("""
        boolFalse#bc799737 = Bool;
        boolTrue#997275b5 = Bool;
        vector#1cb5c415 {t:Type} # [ t ] = Vector t;
        user id:long = User;
        userEmpty = User;
        peerUser user_id:long = Peer;
        message flags:# id:int reply_to:flags.0?Message flags2:# pinned:flags2.3?true via:flags2.31?long = Message;
        messages.messages msgs:Vector<Message> users:Vector<User> = messages.Messages;
        messages.messagesNotModified count:int = messages.Messages;
        future_salt valid_since:int salt:long = FutureSalt;
        future_salts salts:vector<future_salt> = FutureSalts;
        tree nodes:Vector<Node> = Tree;
        leaf value:int = Node;
        branch tree:Tree = Node;
        wrap flags:# inner:flags.0?%Wrap = Wrap;
        holder nonce:int128 key:int256 tag:bytes = Holder;
        ---functions---
        users.getUsers ids:Vector<long> = Vector<User>;
        invokeWithLayer {X:Type} layer:int query:!X = X;
        help.getSalts num:int = FutureSalts;
        getBare = future_salt;
        ping = Bool;
        """)

    @Test func theSchemaIsClean() {
        #expect(Self.schema.diagnostics.isEmpty)
        #expect(Self.schema.layer == nil)
        #expect(Self.schema.file == "t.tl")
    }

    @Test func boxedTypesInOrderOfFirstAppearanceWithConstructorsInSchemaOrder() {
        #expect(Self.schema.types.map(\.name) == [
            "Bool", "User", "Peer", "Message", "messages.Messages", "FutureSalt", "FutureSalts", "Tree", "Node", "Wrap",
            "Holder",
        ])
        #expect(Self.schema.type(named: "User")?.constructors == ["user", "userEmpty"])
        #expect(Self.schema.type(named: "messages.Messages")?.constructors == ["messages.messages", "messages.messagesNotModified"])
        #expect(Self.schema.type(named: "Bool")?.constructors == ["boolFalse", "boolTrue"])
        #expect(Self.schema.type(named: "Vector") == nil)
    }

    @Test func constructorsIncludeTheLanguageOwnedOnes() {
        #expect(Self.schema.constructors.count == 16)
        #expect(Self.schema.constructors.prefix(3).map(\.name) == ["boolFalse", "boolTrue", "vector"])
        #expect(Self.schema.constructor(named: "vector")?.result == .vector(.generic("t"), boxed: true))
        #expect(Self.schema.constructor(named: "userEmpty")?.result == .boxed("User"))
        #expect(Self.schema.functions.map(\.name) == ["users.getUsers", "invokeWithLayer", "help.getSalts", "getBare", "ping"])
    }

    @Test func namespaces() {
        let getUsers = try! #require(Self.schema.functions.first)
        #expect(getUsers.namespace == "users")
        #expect(getUsers.shortName == "getUsers")
        #expect(Self.schema.functions[1].namespace == nil)
        #expect(Self.schema.functions[1].shortName == "invokeWithLayer")
        let messages = try! #require(Self.schema.type(named: "messages.Messages"))
        #expect(messages.namespace == "messages")
        #expect(messages.shortName == "Messages")
        #expect(Self.schema.type(named: "User")?.namespace == nil)
        #expect(Self.schema.constructor(named: "messages.messagesNotModified")?.shortName == "messagesNotModified")
        #expect(Self.schema.constructor(named: "messages.messagesNotModified")?.namespace == "messages")
    }

    @Test func fieldTypesResolve() {
        func fields(_ name: String) -> [String] {
            Self.schema.constructor(named: name)?.fields.map { "\($0.name):\($0.type)" } ?? []
        }
        #expect(fields("messages.messages") == ["msgs:Vector<Message>", "users:Vector<User>"])
        #expect(fields("future_salts") == ["salts:vector<%future_salt>"])
        #expect(Self.schema.constructor(named: "future_salts")?.fields.first?.type == .vector(.bare("future_salt"), boxed: false))
        #expect(Self.schema.constructor(named: "wrap")?.fields.map(\.type) == [.nat, .bare("wrap")])
        #expect(Self.schema.constructor(named: "holder")?.fields.map(\.type) == [.int128, .int256, .bytes])
        #expect(Self.schema.constructor(named: "user")?.fields.map(\.type) == [.long])
    }

    @Test func flagConditionsIncludingFlags2() {
        let message = try! #require(Self.schema.constructor(named: "message"))
        #expect(message.fields.map(\.name) == ["flags", "id", "reply_to", "flags2", "pinned", "via"])
        #expect(message.fields.map(\.type) == [.nat, .int, .boxed("Message"), .nat, .trueFlag, .long])
        #expect(message.fields.map { $0.condition.map { "\($0.flagsField).\($0.bit)" } } == [nil, nil, "flags.0", nil, "flags2.3", "flags2.31"])
    }

    @Test func functionResultTypes() {
        #expect(Self.schema.functions.map(\.result) == [
            .vector(.boxed("User"), boxed: true), .generic("X"), .boxed("FutureSalts"), .bare("future_salt"), .bool,
        ])
        #expect(Self.schema.functions[0].fields.map(\.type) == [.vector(.long, boxed: true)])
    }

    @Test func generics() {
        let invoke = Self.schema.functions[1]
        #expect(invoke.generics == ["X"])
        #expect(invoke.fields.map(\.name) == ["layer", "query"])
        #expect(invoke.fields.map(\.type) == [.int, .generic("X")])
        #expect(invoke.id == 0xDA9B_0D0D)
        #expect(invoke.kind == .function)
        #expect(invoke.definition == "invokeWithLayer#da9b0d0d {X:Type} layer:int query:!X = X;")
    }

    @Test func recursion() {
        let recursive = Self.schema.types.filter(\.isRecursive).map(\.name)
        // Message contains a Message; Tree and Node contain each other; Wrap contains itself bare.
        // messages.Messages holds Messages but nothing in Message leads back to it.
        #expect(recursive == ["Message", "Tree", "Node", "Wrap"])
    }

    @Test func recursionThroughALongerCycle() {
        let schema = check("""
            a b:B = A;
            b flags:# c:flags.0?C = B;
            c as:Vector<A> = C;
            d a:A = D;
            """)
        #expect(schema.types.map { "\($0.name):\($0.isRecursive)" } == ["A:true", "B:true", "C:true", "D:false"])
    }

    @Test func typeDescriptions() {
        #expect(TLType.vector(.bare("future_salt"), boxed: false).description == "vector<%future_salt>")
        #expect(TLType.generic("X").description == "!X")
        #expect(TLType.nat.description == "#")
        #expect(TLType.anyObject.description == "Object")
    }
}

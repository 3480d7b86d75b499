// Describing a generated value from its schema: the value writes itself and its module's registry reads the bytes
// back with the constructor's TL definition, the way it reads a request (`TLRequest`). A generated
// `descriptionFields()` per type was 12 % of the generated API's lines and about a sixth of its clean release build
// (Benchmarks/HISTORY.md); descriptions are for logs, `tl` and tl-json, where a second pass over the bytes is cheap.

/// A generated type whose `descriptionFields()` its module's registry reads from the schema.
public protocol TLSchemaDescribed: TLRegistrable {
    /// The registry of the module that defines the type: it has the constructors' definitions and parses the
    /// values nested in this one.
    static var tlRegistry: TLRegistry { get }
}

extension TLSchemaDescribed {
    /// The value's TL name and fields, read back from its bytes with its module's schema.
    public func descriptionFields() -> (String, [(String, TLValue)]) {
        Self.tlRegistry.descriptionFields(of: self)
    }
}

extension TLRegistry {
    /// `value`'s TL name and fields in schema order (absent optional fields left out, `#` words as `.flags`, set
    /// `true` flags as `.trueFlag`), read from its serialization with its constructor's definition. Nested objects
    /// are parsed through this registry.
    ///
    /// Fails only when the registry lacks the constructor's definition, or when the type's writer and this reading
    /// of its definition disagree (the golden corpus checks every constructor it has); the description then says
    /// so, as its one field `description error`.
    public func descriptionFields(of value: any TLSerializable) -> (String, [(String, TLValue)]) {
        let buffer = Buffer()
        value.serialize(buffer, true)
        var reader = BufferReader(buffer)
        var name = "unknown"
        do throws(TLDecodingError) {
            let id = try reader.readUInt32()
            guard let signature = constructors[id]?.signature else {
                throw TLDecodingError(.unknownConstructor(id, type: self.name), offset: 0)
            }
            name = signature.name
            try reader.enterObject()
            let fields = try TLRequest.readFields(signature, from: &reader, registry: self, listingWords: true)
            reader.leaveObject()
            try reader.expectEnd()
            return (name, fields)
        } catch {
            return (name, [("description error", .string("\(error)"))])
        }
    }

    /// Reads a bare constructor named as a definition writes it: `%Message` (the only constructor of `Message`)
    /// or `future_salt`. Nil when this registry has no such constructor.
    func parseBare(_ text: String, from reader: inout BufferReader) throws(TLDecodingError) -> (any TLObject)? {
        let id: UInt32?
        if text.hasPrefix("%") {
            // The type's constructors are the registry's entries of that type, as a boxed field's check reads them.
            let typeName = text.dropFirst()
            let ids = table.filter { $0.value.tlTypeName == typeName }.map(\.key)
            id = ids.count == 1 ? ids[0] : nil
        } else {
            id = constructors.first { TLSignature.definition($0.value.definition, isNamed: text) }?.key
        }
        guard let id, let type = table[id] else { return nil }
        return try type.parse(&reader, constructor: id)
    }
}

import Testing
import TLJSON
import TLRuntime

/// Every record of the golden corpus, byte for byte, in both directions (Fixtures/corpus/README.md):
/// generated parse of `hex` describes exactly `tl`; generated serialize of that value gives `hex` back;
/// the schema-driven tl-json encoder turns `tl` into exactly `hex`.
@Suite struct GoldenCorpusTests {
    @Test func corpusIsComplete() {
        #expect(Corpus.records.count == 4148)
        #expect(Set(Corpus.records.map(\.section)).count == 18)
    }

    @Test func generatedCodeDecodesEveryRecordToItsTLJSON() {
        var failures: [String] = []
        for record in Corpus.records {
            do {
                let object = try Corpus.registry.parse(bytes: record.bytes)
                let json = TLJSONWriter.json(object)
                if json != record.tl {
                    failures.append("#\(record.seq) \(record.name): decoded \(json.description.prefix(300)) expected \(record.tl.description.prefix(300))")
                }
            } catch {
                failures.append("#\(record.seq) \(record.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) records differ:\n\(failures.prefix(15).joined(separator: "\n"))")
    }

    @Test func generatedCodeReserializesEveryRecordByteForByte() {
        var failures: [String] = []
        for record in Corpus.records {
            guard let object = try? Corpus.registry.parse(bytes: record.bytes) else {
                failures.append("#\(record.seq) \(record.name): does not parse")
                continue
            }
            let buffer = Buffer()
            object.serialize(buffer, true)
            if buffer.bytes != record.bytes {
                failures.append("#\(record.seq) \(record.name): \(Hex.encode(buffer.bytes).prefix(200)) != \(Hex.encode(record.bytes).prefix(200))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) records differ:\n\(failures.prefix(15).joined(separator: "\n"))")
    }

    @Test func tlJSONEncoderEncodesEveryRecordByteForByte() throws {
        let encoder = try #require(Corpus.encoder)
        var failures: [String] = []
        for record in Corpus.records {
            do {
                let bytes = try encoder.encode(record.tl)
                if bytes != record.bytes {
                    failures.append("#\(record.seq) \(record.name): \(Hex.encode(bytes).prefix(200)) != \(Hex.encode(record.bytes).prefix(200))")
                }
            } catch {
                failures.append("#\(record.seq) \(record.name): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) records differ:\n\(failures.prefix(15).joined(separator: "\n"))")
    }
}

// The QR encoder that draws login tokens, against python-qrcode 8.2's codes for the same texts and masks
// (Fixtures/qr/qr_vectors.json, made by Fixtures/qr/make_qr_vectors.py).
import Foundation
import TelegramClient
import Testing

private struct QRVector: Decodable {
    let text: String
    let version: Int
    let mask: Int
    let rows: [String]
}

private struct QRVectorFile: Decodable {
    let vectors: [QRVector]
}

private let qrVectors: [QRVector] = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/qr/qr_vectors.json")
    guard let data = try? Data(contentsOf: url) else { return [] }
    return (try? JSONDecoder().decode(QRVectorFile.self, from: data).vectors) ?? []
}()

@Suite struct QRCodeTests {
    @Test func theFixturesAreThere() {
        #expect(qrVectors.count == 32)
    }

    @Test(arguments: qrVectors.indices)
    func matchesPythonQRCode(index: Int) throws {
        let vector = qrVectors[index]
        let code = try QRCode(text: vector.text, mask: vector.mask)
        #expect(code.version == vector.version)
        #expect(code.size == vector.rows.count)
        let rows = code.modules.map { String($0.map { $0 ? "1" : "0" }) }
        #expect(rows == vector.rows)
    }

    @Test func picksAMaskAndRefusesWhatDoesNotFit() throws {
        let url = LoginToken(token: Array(repeating: 7, count: 32), expires: 0).url
        let code = try QRCode(text: url)
        #expect(code.version == 4 && (0...7).contains(code.mask))
        #expect(try QRCode(text: url, mask: code.mask) == code)
        let drawn = code.terminalText().split(separator: "\n")
        #expect(drawn.count == (code.size + 4 + 1) / 2 && drawn.allSatisfy { $0.count == code.size + 4 })
        #expect(throws: QRCode.Failure.tooLong(bytes: 107)) { try QRCode(text: String(repeating: "x", count: 107)) }
        #expect(throws: QRCode.Failure.invalidMask(8)) { try QRCode(text: "x", mask: 8) }
    }
}

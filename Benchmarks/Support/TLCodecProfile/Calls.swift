// Building request triples as an application does (`TLCodecProfile calls build N`): the builder's whole cost, with
// its fresh Buffer and FunctionDescription, for a mix of calls.
import TLRuntime
import TelegramApi

func buildCalls(_ passes: Int) -> Int {
    var total = 0
    let entities: [Api.MessageEntity] = [.messageEntityBold(.init(offset: 0, length: 5))]
    let part = [UInt8](repeating: 7, count: 1024)
    for index in 0..<passes {
        let history = Api.functions.messages.getHistory(
            peer: .inputPeerUser(.init(userId: 100, accessHash: 200)), offsetId: Int32(truncatingIfNeeded: index),
            offsetDate: 0, addOffset: 0, limit: 20, maxId: 0, minId: 0, hash: 0)
        total &+= history.1.count
        let send = Api.functions.messages.sendMessage(
            silent: true, peer: .inputPeerSelf, message: "hello there", randomId: Int64(index), entities: entities)
        total &+= send.1.count
        let first = Api.functions.invokeWithLayer(
            layer: 229, query: Api.functions.initConnection(
                apiId: 12345, deviceModel: "PC 64bit", systemVersion: "Linux", appVersion: "1.0",
                systemLangCode: "en", langPack: "", langCode: "en", query: Api.functions.help.getConfig()))
        total &+= first.1.count
        let upload = Api.functions.upload.saveFilePart(fileId: 1, filePart: Int32(truncatingIfNeeded: index), bytes: part)
        total &+= upload.1.count
    }
    return total
}

/// `TLCodecProfile calls upload N`: `upload.saveFilePart` triples of a 512 KiB part (the largest a client sends).
func buildUploads(_ passes: Int) -> Int {
    var total = 0
    let part = [UInt8](repeating: 7, count: 512 * 1024)
    for index in 0..<passes {
        total &+= Api.functions.upload.saveFilePart(fileId: 1, filePart: Int32(truncatingIfNeeded: index), bytes: part).1.count
    }
    return total
}

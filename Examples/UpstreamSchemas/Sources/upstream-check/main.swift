// Uses both generated upstream APIs: prints their layers and round-trips one value through each registry, so the
// build proves more than that the files compile.
import TDLibApi
import TDesktopApi
import TLRuntime

let peer = TDLib.InputPeer.inputPeerUser(.init(userId: 1, accessHash: 2))
let buffer = Buffer()
peer.serialize(buffer, true)
let bytes = buffer.bytes
let viaTDLib = try TDLib.registry.parse(bytes: bytes)
let viaTDesktop = try TDesktop.registry.parse(bytes: bytes)
print("TDLib layer \(TDLib.layer): \(viaTDLib.descriptionFields().0); TDesktop layer \(TDesktop.layer): \(viaTDesktop.descriptionFields().0)")

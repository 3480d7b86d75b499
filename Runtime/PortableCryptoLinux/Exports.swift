// The portable crypto backend's libraries on Linux, re-exported for MTProtoCrypto, which depends on this target only
// with the package trait `PortableCryptoBackend` (Package.swift says why it is a target of its own). On Apple
// platforms MTProtoCrypto depends on the libraries directly.
#if os(Linux)
@_exported import BigInt
@_exported import Crypto
@_exported import _CryptoExtras
#endif

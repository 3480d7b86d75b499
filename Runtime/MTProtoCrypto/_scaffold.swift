// MTProtoCrypto

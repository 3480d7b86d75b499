// TLSwiftGen

// MTProtoTransport

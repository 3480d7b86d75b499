// MTProtoTransportNIO

// TLSchema

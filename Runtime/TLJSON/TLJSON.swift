// tl-json: schema-driven reading and writing of TL values.

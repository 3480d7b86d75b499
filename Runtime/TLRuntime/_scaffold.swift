// TLRuntime

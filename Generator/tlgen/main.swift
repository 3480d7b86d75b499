print("tlgen")

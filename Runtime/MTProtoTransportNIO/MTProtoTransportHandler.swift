// Placeholder until the handlers land.

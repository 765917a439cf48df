"""Product core: decode, the document processor (one visible flow) and the engine that batches and schedules it."""

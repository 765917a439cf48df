"""The learned extraction decision: candidates from every source, one feature vector each, a trained scorer's
P(candidate is the field's value) and one joint assignment per document (``extraction.method: learned``)."""

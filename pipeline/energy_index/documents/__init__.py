"""Pure: the documents the pipeline writes (the index, its build report, the extras), the
editorial text and JSON Schemas they answer to, the checks beyond the schema, and the
comparisons between two indexes (audit, changelog)."""

"""The fast path's shortcuts: each reads one shape of records straight from their bytes, declares
the record versions it was written for, and leaves anything else to the general path."""

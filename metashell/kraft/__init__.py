"""The KRaft wire format: fixed binary layouts declared once (``layouts``)."""

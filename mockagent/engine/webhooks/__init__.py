"""Push notifications: where a webhook may go (`policy`), sending one with httpx (`send`), the
per-destination delivery lanes (`delivery`) and what became of each (`delivery_log`)."""

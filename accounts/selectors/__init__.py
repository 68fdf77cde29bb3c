"""Reads on developers, keys and units: `key_read` (the request path's read of its key),
`usage` (a month's units against a quota), `portal` (the developer portal's reads),
`request_log` (the portal's request log)."""

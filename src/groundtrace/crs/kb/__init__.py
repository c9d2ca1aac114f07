"""Stage 1 — the knowledge base: Yelp files → selected POIs and reviews, the demo city, SQLite storage,
spatial queries."""

"""The OpenAI-compatible surface: requests scanned on the way in, responses on the way out."""

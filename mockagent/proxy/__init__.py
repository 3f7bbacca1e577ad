"""Recording: a proxy in front of a real agent that writes what it answered into a cassette."""

#!/usr/bin/env python3
"""A backend's end of Usher's webhook, for trying it out: takes Usher's actions on
http://127.0.0.1:9000/usher, checks each signature (USHER_WEBHOOK_SECRET), skips an
Idempotency-Key it has taken before, and prints the rest. Answer 2xx only once an action is
kept: anything else makes Usher try again (docs/webhook.md)."""
import hashlib, hmac, http.server, json, os, sys, time

SECRET = os.environ["USHER_WEBHOOK_SECRET"].encode()
seen = set()

class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        stamp = self.headers.get("X-Usher-Timestamp", "")
        expected = "sha256=" + hmac.new(SECRET, stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        if not stamp.isdigit() or abs(time.time() - int(stamp)) > 300 or \
                not hmac.compare_digest(expected, self.headers.get("X-Usher-Signature", "")):
            self.send_response(401); self.end_headers(); return
        key = self.headers["Idempotency-Key"]
        if key not in seen:
            seen.add(key)
            action = json.loads(body)
            if action["type"] == "tags":
                what = " ".join(["+" + t for t in action["added"]] + ["-" + t for t in action["removed"]])
            else:
                what = action.get("text") or action.get("reason", "")
            print(action["type"], action["conversation"], what, flush=True)
        self.send_response(200); self.end_headers()

    def log_message(self, *args):
        pass

port = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
http.server.HTTPServer(("127.0.0.1", port), Receiver).serve_forever()

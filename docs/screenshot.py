#!/usr/bin/env python3
"""Screenshot an HTML file with a real headless Chromium (Qt WebEngine via PySide6).

Usage:
    python screenshot.py INPUT.html OUTPUT.png [--width 1280] [--height 1600]
                         [--full-page] [--fit-width] [--timeout-s 60]

The page is laid out in a WIDTH x HEIGHT viewport and the shot is that viewport
(the top of the page). --full-page grows the viewport to the page's whole scroll
height (capped by --max-height) and shoots all of it. --fit-width widens the
viewport to the page's scroll width when content overflows WIDTH (the page
reflows at the new width).

Needs: pip install PySide6-Essentials==6.12.0 PySide6-WebEngine==6.12.0.140
(from Qt 6.12 on, QtWebEngine is its own wheel, not part of PySide6-Addons).
Runs without a display or GPU: QT_QPA_PLATFORM=offscreen and software rendering.

How it knows the page is painted: after the (last) resize it puts a small
marker of an unusual colour in the viewport's bottom-right corner, polls the
widget grab until the marker shows (so a frame of the final size has reached
Qt), removes the marker, polls until it is gone, then saves that grab.
Chromium takes about 1 s to present the first frame after a big resize; a
fixed delay would give a blank bottom part.
"""

import argparse
import json
import os
import sys
import time

MARK_RGB = (254, 1, 253)
MARK_PX = 6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=1600)
    ap.add_argument(
        "--full-page", action="store_true", help="shoot the whole page height instead of --height"
    )
    ap.add_argument(
        "--fit-width", action="store_true", help="widen to the page's scroll width if it overflows --width"
    )
    ap.add_argument(
        "--max-height", type=int, default=16000, help="cap on either side for --full-page/--fit-width"
    )
    ap.add_argument("--settle-ms", type=int, default=300, help="wait after load before measuring the page")
    ap.add_argument("--timeout-s", type=float, default=60)
    args = ap.parse_args(argv)

    # Must be set before Qt / Chromium start.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # Chromium's sandbox cannot run as root (and often not in containers).
    os.environ.setdefault("QTWEBENGINE_DISABLE_SANDBOX", "1")
    flags = os.environ.get("QTWEBENGINE_CHROMIUM_FLAGS", "")
    for f in ("--no-sandbox", "--disable-gpu", "--force-device-scale-factor=1"):
        if f not in flags:
            flags += " " + f
    os.environ["QTWEBENGINE_CHROMIUM_FLAGS"] = flags.strip()

    from PySide6.QtCore import Qt, QTimer, QUrl
    from PySide6.QtGui import QColor, QGuiApplication
    from PySide6.QtWebEngineCore import QWebEngineSettings
    from PySide6.QtWebEngineWidgets import QWebEngineView
    from PySide6.QtWidgets import QApplication

    QGuiApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)
    app = QApplication([sys.argv[0]])

    view = QWebEngineView()
    view.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
    s = view.settings()
    s.setAttribute(QWebEngineSettings.WebAttribute.ShowScrollBars, False)
    s.setAttribute(QWebEngineSettings.WebAttribute.JavascriptEnabled, True)
    s.setAttribute(QWebEngineSettings.WebAttribute.LocalContentCanAccessFileUrls, True)
    view.resize(args.width, args.height)
    view.show()

    state = {"rc": 1, "size": (args.width, args.height), "t": 0.0}
    mark = QColor(*MARK_RGB).rgb()

    def fail(msg):
        print("screenshot: " + msg, file=sys.stderr)
        state["rc"] = 2
        app.quit()

    def js(code, cb=None):
        if cb is None:
            view.page().runJavaScript(code, 0)
        else:
            view.page().runJavaScript(code, 0, cb)

    def marker_shown(img):
        w, h = state["size"]
        if img.width() != w or img.height() != h:
            return False
        return img.pixel(w - 2, h - 2) == mark

    def poll(want_marker, then):
        img = view.grab().toImage()
        if marker_shown(img) == want_marker:
            then(img)
        elif time.time() - state["t"] > args.timeout_s:
            fail("page never painted at {}x{}".format(*state["size"]))
        else:
            QTimer.singleShot(50, lambda: poll(want_marker, then))

    def save(img):
        w, h = img.width(), img.height()
        px = {img.pixel(x, y) for x in range(0, w, max(1, w // 37)) for y in range(0, h, max(1, h // 53))}
        if len(px) <= 1:
            fail("grabbed image is uniform (blank render?)")
            return
        if not img.save(args.output, "PNG"):
            fail("could not write " + args.output)
            return
        print(f"wrote {args.output} ({w}x{h})")
        state["rc"] = 0
        app.quit()

    def unmark(_img):
        js("var m=document.getElementById('__shot_mark__'); if (m) m.remove();")
        poll(False, save)

    def add_marker():
        r, g, b = MARK_RGB
        js(
            "(function(){var m=document.createElement('div');m.id='__shot_mark__';"
            f"m.style.cssText='position:fixed;right:0;bottom:0;width:{MARK_PX}px;height:{MARK_PX}px;"
            f"background:rgb({r},{g},{b});z-index:2147483647;pointer-events:none';"
            "document.documentElement.appendChild(m);})();"
        )
        state["t"] = time.time()
        poll(True, unmark)

    def measured(dims):
        try:
            pw, ph = (int(x) for x in json.loads(dims))
        except (TypeError, ValueError):
            print(f"screenshot: could not read page size ({dims!r})", file=sys.stderr)
            pw, ph = args.width, args.height
        print(
            f"page size laid out at width {args.width}: {pw}x{ph} px"
            + (" (wider than the viewport)" if pw > args.width else "")
        )
        w = min(max(pw, args.width), args.max_height) if args.fit_width else args.width
        h = min(max(ph, 1), args.max_height) if args.full_page else args.height
        state["size"] = (w, h)
        if (w, h) != (args.width, args.height):
            view.resize(w, h)
        add_marker()

    def loaded(ok):
        if not ok:
            fail("page failed to load: " + args.input)
            return
        code = (
            "JSON.stringify([document.documentElement.scrollWidth,"
            " Math.max(document.documentElement.scrollHeight,"
            " document.body ? document.body.scrollHeight : 0)])"
        )
        QTimer.singleShot(args.settle_ms, lambda: js(code, measured))

    view.loadFinished.connect(loaded)
    QTimer.singleShot(int(args.timeout_s * 1000) + 5000, lambda: fail("timed out"))
    view.load(QUrl.fromLocalFile(os.path.abspath(args.input)))
    app.exec()
    return state["rc"]


if __name__ == "__main__":
    sys.exit(main())

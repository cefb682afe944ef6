#pragma once

// Colours shared by every view, so a strategy or a key has one colour across the dashboard and
// red means "violation" and nothing else.

#include <QColor>
#include <QString>

namespace lockbench::dashboard {

// Overlapping holds; no palette colour is close to it.
QColor overlap_color();
// Fault windows: translucent, so the series beneath stay readable.
QColor fault_color();
QColor nemesis_color();

// The i-th colour of a qualitative palette without reds.
QColor palette_color(int i);

// A stable colour per strategy name (by its position in the strategy registry's order).
QColor strategy_color(const QString& strategy);

}  // namespace lockbench::dashboard

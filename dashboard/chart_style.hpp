#pragma once

// Colours shared by every view, so a strategy or a key has one colour across the dashboard and
// red means "violation" and nothing else.

#include <vector>

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

// A stable colour per strategy name: every built-in strategy and adapter has its own entry of
// strategy_palette(), clearly distinct from every other's; an unknown name gets one by its hash.
QColor strategy_color(const QString& strategy);
const std::vector<QColor>& strategy_palette();
const std::vector<QString>& strategies_with_own_color();

}  // namespace lockbench::dashboard

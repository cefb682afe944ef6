#include "dashboard/chart_style.hpp"

#include <array>

namespace lockbench::dashboard {

QColor overlap_color() {
    return QColor(214, 39, 40);
}

QColor fault_color() {
    return QColor(128, 128, 128, 60);
}

QColor nemesis_color() {
    return QColor(255, 127, 14);
}

QColor palette_color(int i) {
    // Tableau 10 minus its red and orange (taken by overlaps and the nemesis).
    static const std::array<QColor, 8> colors = {
        QColor(31, 119, 180),  QColor(44, 160, 44),   QColor(148, 103, 189), QColor(140, 86, 75),
        QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),  QColor(23, 190, 207)};
    auto n = static_cast<int>(colors.size());
    return colors[static_cast<std::size_t>(((i % n) + n) % n)];
}

QColor strategy_color(const QString& strategy) {
    static const std::array<const char*, 8> order = {
        "setnx_getset", "set_nx_px", "set_nx_px_del", "reentrant_hash",
        "rwlock_seed",  "rwlock",    "fenced",        "redlock"};
    for (std::size_t i = 0; i < order.size(); ++i) {
        if (strategy == QLatin1String(order[i]))
            return palette_color(static_cast<int>(i));
    }
    return palette_color(static_cast<int>(qHash(strategy) % 8));
}

}  // namespace lockbench::dashboard

#include "dashboard/chart_style.hpp"

#include <array>
#include <vector>

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

const std::vector<QColor>& strategy_palette() {
    // Tableau 10 without its red and orange (violations and the nemesis), then colours picked
    // to stay at least ~26 CIELAB ΔE from each other and from those two: neighbours on a chart
    // (set_nx_px_del, set_nx_px_wait) must never look alike.
    static const std::vector<QColor> colors = {
        QColor(31, 119, 180),  QColor(44, 160, 44),   QColor(148, 103, 189), QColor(140, 86, 75),
        QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34),  QColor(23, 190, 207),
        QColor(0, 0, 0),       QColor(0, 0, 128),     QColor(170, 0, 170),   QColor(249, 150, 121),
        QColor(194, 178, 128), QColor(247, 182, 210), QColor(152, 223, 138), QColor(174, 199, 232),
        QColor(0, 90, 0),      QColor(0, 100, 100),   QColor(230, 171, 2),   QColor(43, 61, 38)};
    return colors;
}

const std::vector<QString>& strategies_with_own_color() {
    // The strategy registry's names, then the adapters' (strategies/external/adapter_registry):
    // each keeps its palette entry whatever else a results folder holds. The first eight keep
    // the colours the dashboard always gave them.
    static const std::vector<QString> names = {
        "setnx_getset",  "set_nx_px",      "set_nx_px_del", "reentrant_hash", "rwlock_seed",
        "rwlock",        "fenced",         "redlock",       "set_nx_px_wait", "zk_mutex",
        "zk_rwlock",     "redis-py",       "kazoo",         "node-redlock",   "redis-semaphore",
        "curator-mutex", "curator-rwlock", "etcd3-lock",    "null-adapter"};
    return names;
}

QColor strategy_color(const QString& strategy) {
    const auto& names = strategies_with_own_color();
    const auto& colors = strategy_palette();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (strategy == names[i])
            return colors[i];
    }
    // A name this build does not know (a new adapter): a stable pick by its name.
    return colors[static_cast<std::size_t>(qHash(strategy, 0) % colors.size())];
}

}  // namespace lockbench::dashboard

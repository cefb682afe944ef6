#pragma once

// The checker's and the runs' text (std::string, UTF-8) as Qt shows it.

#include <string>

#include <QString>

namespace lockbench::dashboard {

inline QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

}  // namespace lockbench::dashboard

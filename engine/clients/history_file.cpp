#include "engine/clients/history_file.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <unistd.h>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError

namespace lockbench {

HistoryFile::HistoryFile(const std::filesystem::path& path, Writes writes) {
    constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    if (writes == Writes::DirectWherePossible) {
        fd_ = ::open(path.c_str(), kFlags | O_DIRECT, 0644);
        direct_ = fd_ >= 0;
    }
    // EINVAL: the filesystem does not do direct I/O.
    if (fd_ < 0 && (writes == Writes::ThroughThePageCache || errno == EINVAL))
        fd_ = ::open(path.c_str(), kFlags, 0644);
    if (fd_ < 0)
        throw EnvironmentError("cannot write " + path.string() + ": " + std::strerror(errno));
}

HistoryFile::~HistoryFile() {
    if (fd_ >= 0)
        ::close(fd_);
    std::free(staged_);
}

bool HistoryFile::append(std::string_view bytes) {
    if (!error_.empty())
        return false;
    if (!direct_) {
        if (staged_size_ > 0) {  // left by a direct write the filesystem refused
            if (!write_all(staged_, staged_size_))
                return false;
            staged_size_ = 0;
        }
        return write_all(bytes.data(), bytes.size());
    }
    if (staged_size_ + bytes.size() > staged_capacity_) {
        const std::size_t wanted = (staged_size_ + bytes.size() + kBlock - 1) / kBlock * kBlock;
        auto* grown = static_cast<char*>(std::aligned_alloc(kBlock, wanted));
        if (!grown)
            throw std::bad_alloc();
        if (staged_size_ > 0)
            std::memcpy(grown, staged_, staged_size_);
        std::free(staged_);
        staged_ = grown;
        staged_capacity_ = wanted;
    }
    std::memcpy(staged_ + staged_size_, bytes.data(), bytes.size());
    staged_size_ += bytes.size();
    const std::size_t whole = staged_size_ / kBlock * kBlock;
    if (whole == 0)
        return true;
    if (!write_all(staged_, whole))
        return false;
    std::memmove(staged_, staged_ + whole, staged_size_ - whole);
    staged_size_ -= whole;
    return true;
}

bool HistoryFile::close() {
    if (fd_ < 0)
        return error_.empty();
    // The last, partial block goes through the page cache: O_DIRECT writes whole blocks only.
    if (error_.empty() && staged_size_ > 0 && (!direct_ || stop_writing_direct()))
        write_all(staged_, staged_size_);
    staged_size_ = 0;
    if (::close(fd_) != 0 && error_.empty())
        error_ = std::strerror(errno);
    fd_ = -1;
    return error_.empty();
}

bool HistoryFile::stop_writing_direct() {
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0) {
        error_ = std::strerror(errno);
        return false;
    }
    direct_ = false;
    return true;
}

bool HistoryFile::write_all(const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd_, data, size);
        if (n < 0 && errno == EINTR)
            continue;
        // A filesystem may take O_DIRECT at open and refuse it at the first write.
        if (n < 0 && errno == EINVAL && direct_ && stop_writing_direct())
            continue;
        if (n <= 0) {
            error_ = n < 0 ? std::strerror(errno) : "the disk took no more bytes";
            return false;
        }
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace lockbench

// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// The attributes the kernel layers put on their events (docs/trace-model.md): each one's name,
// description and OTF2 type in one place, for the recorder that writes them, the synthetic
// archives of the tests and benchmarks, and the readers that look them up by name.
#include <otf2/OTF2_GeneralDefinitions.h>

#include <string_view>

namespace ezio::schema {

struct AttributeSpec {
  std::string_view name;
  std::string_view description;
  OTF2_Type type;
};

// The id of the call in this recording: on a syscall's ENTER and on the block requests it caused.
inline constexpr AttributeSpec kCallId{"call.id", "id of the call in this recording",
                                       OTF2_TYPE_UINT64};

// On a syscall's ENTER (the syscall layer).
namespace syscall {
inline constexpr AttributeSpec kFd{"syscall.fd", "file descriptor argument", OTF2_TYPE_INT64};
inline constexpr AttributeSpec kBytes{"syscall.bytes", "bytes requested", OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kOffset{"syscall.offset", "explicit file offset", OTF2_TYPE_INT64};
inline constexpr AttributeSpec kResult{"syscall.result", "return value, -errno on error",
                                       OTF2_TYPE_INT64};
}  // namespace syscall

// On a VFS call's ENTER.
namespace vfs {
inline constexpr AttributeSpec kInode{"vfs.inode", "inode number", OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kDev{"vfs.dev", "device of the file system (major:minor)",
                                    OTF2_TYPE_STRING};
inline constexpr AttributeSpec kFsType{"vfs.fstype", "file-system type", OTF2_TYPE_STRING};
inline constexpr AttributeSpec kPath{
    "vfs.path", "path of the file in the recorded process's mount tree", OTF2_TYPE_STRING};
inline constexpr AttributeSpec kMount{"vfs.mount", "mount point of the file's file system",
                                      OTF2_TYPE_STRING};
inline constexpr AttributeSpec kOffset{"vfs.offset", "file position the call started at",
                                       OTF2_TYPE_INT64};
inline constexpr AttributeSpec kResult{"vfs.result", "bytes moved, or -errno", OTF2_TYPE_INT64};
inline constexpr AttributeSpec kDerived{
    "vfs.derived", "1: times are the syscall's (no hook inside the VFS)", OTF2_TYPE_UINT8};
// Trace model 2: the file of the event, one reference to an IoRegularFile named after the path
// ("" when the walk was truncated) whose IoFileProperties hold vfs.dev, vfs.fstype and vfs.mount
// (absent with the path): four values of model 1 in one.
inline constexpr AttributeSpec kFile{"vfs.file", "the file (its path, device, type and mount)",
                                     OTF2_TYPE_IO_FILE};
// Trace model 2: the description of the VFS regions whose events are derived from the syscall
// around them (their vfs.derived is 1, their vfs.result the syscall's).
inline constexpr std::string_view kDerivedRegionDescription = "eziotrace vfs layer, derived";
}  // namespace vfs

// On a file-system function's ENTER.
namespace fs {
inline constexpr AttributeSpec kInode{"fs.inode", "inode number", OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kOffset{"fs.offset", "file offset", OTF2_TYPE_INT64};
inline constexpr AttributeSpec kBytes{"fs.bytes", "length asked for", OTF2_TYPE_INT64};
inline constexpr AttributeSpec kResult{"fs.result", "return value of the function",
                                       OTF2_TYPE_INT64};
inline constexpr AttributeSpec kPoint{"fs.point", "1: a single tracepoint, no duration",
                                      OTF2_TYPE_UINT8};
inline constexpr AttributeSpec kHits{
    "fs.hits", "per-page tracepoint hits merged into this event (first to last hit)",
    OTF2_TYPE_UINT32};
}  // namespace fs

// On a block request's IoOperationBegin (with kCallId).
namespace block {
inline constexpr AttributeSpec kPid{"block.pid", "process the request is attributed to",
                                    OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kTid{"block.tid", "thread the request is attributed to",
                                    OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kSector{"block.sector", "first sector (512 bytes)",
                                       OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kQueueNs{"block.queue_ns", "creation to issue to the driver, ns",
                                        OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kServiceNs{"block.service_ns", "issue to completion, ns",
                                          OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kOp{"block.op", "read, write, flush, discard, …", OTF2_TYPE_STRING};
inline constexpr AttributeSpec kFlags{"block.flags", "sync, meta, fua, preflush", OTF2_TYPE_STRING};
inline constexpr AttributeSpec kCause{
    "block.cause", "submitter (the thread created it), writeback (pages it dirtied), flush",
    OTF2_TYPE_STRING};
inline constexpr AttributeSpec kSharedBytes{
    "block.shared_bytes", "bytes of the request that are not the target's (other processes' bios)",
    OTF2_TYPE_UINT64};
}  // namespace block

// On a balance_dirty_pages ENTER (the page-cache layer's throttling).
namespace throttle {
inline constexpr AttributeSpec kPause{
    "pagecache.pause_jiffies", "the pause balance_dirty_pages chose, in jiffies", OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kDirtied{
    "pagecache.dirtied", "pages the thread dirtied since its previous pause", OTF2_TYPE_UINT64};
inline constexpr AttributeSpec kBdi{"pagecache.bdi", "backing device whose limits were exceeded",
                                    OTF2_TYPE_STRING};
}  // namespace throttle

}  // namespace ezio::schema

// SPDX-License-Identifier: GPL-2.0-only
#pragma once
// SIGINT/SIGTERM/SIGHUP to the recorder are meant for the application: they are caught and handed
// on, and the recording goes on until the application has ended.
namespace ezio::recorder {

class SignalForwarding {
 public:
  SignalForwarding();
  ~SignalForwarding();
  // The signal received since the last call that the application did not get by itself, or 0.
  // A terminal's Ctrl-C reaches the whole foreground process group, the application included, so
  // it is not sent a second time.
  int take();
  bool received_any() const;
  // The first signal received, or 0: what the archive says interrupted the recording.
  int first() const;
};

}  // namespace ezio::recorder

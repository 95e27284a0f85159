/**
 * Preloaded into the server under test by bench/profile.ts (`node --import …/cpu-profile-hook.ts`):
 * the first SIGUSR2 starts the V8 CPU profiler in this process and writes `<BENCH_CPU_PROFILE>.started`,
 * the second stops it and writes the profile to BENCH_CPU_PROFILE (`.cpuprofile` JSON), so the
 * profile covers exactly the loaded window, not start-up or warm-up. Without the variable it does nothing.
 */
import { renameSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

const out = process.env.BENCH_CPU_PROFILE;
if (out) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on("SIGUSR2", () => {
    void (async () => {
      if (!running) {
        running = true;
        await session.post("Profiler.enable");
        await session.post("Profiler.setSamplingInterval", { interval: Number(process.env.BENCH_CPU_PROFILE_INTERVAL_US ?? 250) });
        await session.post("Profiler.start");
        writeFileSync(`${out}.started`, "");
      } else {
        const { profile } = await session.post("Profiler.stop");
        running = false;
        writeFileSync(`${out}.tmp`, JSON.stringify(profile));
        renameSync(`${out}.tmp`, out);
      }
    })();
  });
}

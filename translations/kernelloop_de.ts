<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="de">
<context>
    <name>kl::gui::DiagnosticsModel</name>
    <message>
        <source>error</source>
        <translation>Fehler</translation>
    </message>
    <message>
        <source>warning</source>
        <translation>Warnung</translation>
    </message>
    <message>
        <source>note</source>
        <translation>Hinweis</translation>
    </message>
    <message>
        <source>Severity</source>
        <extracomment>column header: error, warning or note</extracomment>
        <translation>Schweregrad</translation>
    </message>
    <message>
        <source>Category</source>
        <extracomment>column header: the error&apos;s stable category, e.g. &quot;syntax&quot; or &quot;problem.missing-field&quot;</extracomment>
        <translation>Kategorie</translation>
    </message>
    <message>
        <source>Location</source>
        <translation>Ort</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>Meldung</translation>
    </message>
</context>
<context>
    <name>kl::gui::KernelEditor</name>
    <message>
        <source>%1: %2</source>
        <extracomment>%1 is &quot;error&quot; or &quot;warning&quot; as the compiler said it, %2 the compiler&apos;s message</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kl::gui::MainWindow</name>
    <message>
        <source>KernelLoop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tunables</source>
        <translation>Parameter</translation>
    </message>
    <message>
        <source>Static report</source>
        <translation>Statischer Bericht</translation>
    </message>
    <message>
        <source>Occupancy</source>
        <translation>Auslastung</translation>
    </message>
    <message>
        <source>Open a problem file (File ▸ Open) to start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compiling…</source>
        <extracomment>status bar, while NVRTC compiles in the background</extracomment>
        <translation>Kompiliere…</translation>
    </message>
    <message>
        <source>Diagnostics</source>
        <translation>Diagnosen</translation>
    </message>
    <message>
        <source>Compiler log</source>
        <extracomment>tab with NVRTC&apos;s whole program log</extracomment>
        <translation>Compiler-Protokoll</translation>
    </message>
    <message>
        <source>PTX</source>
        <extracomment>tab with the generated PTX assembly</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compiler</source>
        <translation>Compiler</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>&amp;Datei</translation>
    </message>
    <message>
        <source>&amp;Open Problem…</source>
        <translation>Problem Ö&amp;ffnen…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>&amp;Zuletzt geöffnet</translation>
    </message>
    <message>
        <source>Re&amp;load Problem</source>
        <translation>Problem neu &amp;laden</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>&amp;Beenden</translation>
    </message>
    <message>
        <source>&amp;Analysis</source>
        <translation>&amp;Analyse</translation>
    </message>
    <message>
        <source>&amp;Analyse Now</source>
        <extracomment>menu action: compile the editor&apos;s text again and refresh the static report</extracomment>
        <translation>Jetzt &amp;analysieren</translation>
    </message>
    <message>
        <source>Restore &amp;Baseline</source>
        <extracomment>menu action: put the problem&apos;s baseline source back into the editor</extracomment>
        <translation>&amp;Ausgangsversion wiederherstellen</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>&amp;Ansicht</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>&amp;Hilfe</translation>
    </message>
    <message>
        <source>&amp;About KernelLoop</source>
        <translation>Über &amp;KernelLoop</translation>
    </message>
    <message>
        <source>About KernelLoop</source>
        <translation>Über KernelLoop</translation>
    </message>
    <message>
        <source>&lt;p&gt;&lt;b&gt;KernelLoop %1&lt;/b&gt;&lt;/p&gt;&lt;p&gt;A workbench for closed-loop CUDA kernel optimisation: propose, compile, verify, benchmark, profile, repeat.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The problem file is malformed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The problem could not be opened</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — KernelLoop</source>
        <extracomment>window title; %1 the problem&apos;s name</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Opened %1; analysing the baseline…</source>
        <extracomment>status bar; %1 the problem&apos;s name</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open Problem</source>
        <translation>Problem öffnen</translation>
    </message>
    <message>
        <source>Problem files (*.json);;All files (*)</source>
        <extracomment>file dialog filter</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No recent problems</source>
        <translation>Keine zuletzt geöffneten Probleme</translation>
    </message>
    <message>
        <source>Clear List</source>
        <translation>Liste leeren</translation>
    </message>
    <message>
        <source>analysed in %1 ms</source>
        <extracomment>status bar: wall time of the last analysis (parse, compile, occupancy)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The analysis failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The candidate&apos;s declarations are invalid</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The launch rule cannot be resolved</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An expression in the candidate is invalid</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Compiled %n kernel(s) in %1 ms. %2</source>
        <extracomment>status bar after a successful compile; %n kernel count, %1 NVRTC milliseconds, %2 the report&apos;s summary</extracomment>
        <translation>
            <numerusform>%n Kernel in %1 ms kompiliert. %2</numerusform>
            <numerusform>%n Kernel in %1 ms kompiliert. %2</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 [%2] %3: %4</source>
        <extracomment>status bar for a categorised error; %1 what failed, %2 the stable category, %3 file and field or line, %4 the message</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;i&gt;No problem open.&lt;/i&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; · %2 · &lt;tt&gt;%3&lt;/tt&gt; · main sizes: %4</source>
        <extracomment>line above the editor; %1 problem name, %2 target architecture, %3 candidate file, %4 main sizes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No occupancy: the candidate could not be analysed</source>
        <extracomment>occupancy chart title when the analysis stopped at an input error</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No occupancy: the candidate did not compile</source>
        <extracomment>occupancy chart title after a compile error</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Compile error: %1</source>
        <extracomment>status bar; %1 the compiler&apos;s one-line summary, e.g. &quot;syntax error at baseline.cu:12:5: expected a &apos;;&apos;&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kl::gui::OccupancyChart</name>
    <message>
        <source>Theoretical occupancy</source>
        <extracomment>axis title of the occupancy chart</extracomment>
        <translation>Theoretische Auslastung</translation>
    </message>
    <message>
        <source>Registers per thread</source>
        <extracomment>x axis of the occupancy chart</extracomment>
        <translation>Register pro Thread</translation>
    </message>
    <message>
        <source>Threads per block</source>
        <extracomment>x axis of the occupancy chart</extracomment>
        <translation>Threads pro Block</translation>
    </message>
    <message>
        <source>Shared memory per block (KiB)</source>
        <extracomment>x axis of the occupancy chart; KiB = 1024 bytes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 threads, %3 registers → %4% occupancy</source>
        <extracomment>chart title; %1 kernel name, %2 threads per block, %3 registers per thread, %4 occupancy in percent</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Occupancy appears after the first analysis</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kl::gui::OccupancyPanel</name>
    <message>
        <source>vs registers per thread</source>
        <extracomment>occupancy chart choice: what varies along the x axis</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vs threads per block</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>vs shared memory per block</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>kl::gui::StaticReportModel</name>
    <message>
        <source>%1 B</source>
        <extracomment>a byte count; B = bytes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 KiB</source>
        <extracomment>a size in KiB (1024 bytes)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>warps</source>
        <extracomment>what limits occupancy: the SM&apos;s warp slots</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>registers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>shared memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>blocks</source>
        <extracomment>what limits occupancy: the SM&apos;s maximum resident blocks</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>barriers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No launches at the main sizes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2 registers, %3% occupancy (limited by %4), %5 waves</source>
        <extracomment>status summary; %1 kernel, %2 registers per thread, %3 occupancy percent, %4 limiter, %5 waves</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cannot run</source>
        <extracomment>occupancy cell when the launch cannot run at all</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1%</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Symbol: %1
Compiled for %2</source>
        <extracomment>tooltip; %1 the symbol in the cubin, %2 the architecture</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 bytes per block in all: above the 48 KiB default, the launch must opt in</source>
        <extracomment>tooltip; %1 bytes of shared memory per block</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 bytes per block in all (static + dynamic)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A stack frame lives in local memory (off-chip, cached) even without spills.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Registers spilled to local memory: fewer live values, smaller tiles or __launch_bounds__ help.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Block %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grid %1 = %2 blocks</source>
        <extracomment>tooltip; %1 grid dims, %2 total blocks</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 warps per SM
Blocks per SM allowed by warps %3, registers %4, shared memory %5, blocks %6, barriers %7</source>
        <extracomment>tooltip of the occupancy cells: each limit on blocks per SM; – means no limit</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 @ %2</source>
        <extracomment>header of one launch; %1 kernel name, %2 size label</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Registers per thread (ptxas)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Static shared memory per block (ptxas)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dynamic shared memory per block (the launch rule)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stack frame per thread: local memory</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resident blocks per SM (theoretical)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Grid blocks / (blocks per SM × SMs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Kernel</source>
        <translation>Kernel</translation>
    </message>
    <message>
        <source>Size</source>
        <extracomment>the size set a launch was planned for (e.g. 8192x4096)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Registers per thread</source>
        <translation>Register pro Thread</translation>
    </message>
    <message>
        <source>Static shared memory</source>
        <translation>Statischer Shared Memory</translation>
    </message>
    <message>
        <source>Dynamic shared memory</source>
        <translation>Dynamischer Shared Memory</translation>
    </message>
    <message>
        <source>Stack frame</source>
        <extracomment>per-thread stack frame (local memory)</extracomment>
        <translation>Stack-Frame</translation>
    </message>
    <message>
        <source>Spill stores</source>
        <extracomment>bytes of register spill stores per thread</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Spill loads</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Barriers</source>
        <extracomment>named barriers the kernel uses</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Threads per block</source>
        <translation>Threads pro Block</translation>
    </message>
    <message>
        <source>Grid</source>
        <extracomment>the launch grid</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Blocks per SM</source>
        <translation>Blöcke pro SM</translation>
    </message>
    <message>
        <source>Theoretical occupancy</source>
        <translation>Theoretische Auslastung</translation>
    </message>
    <message>
        <source>Occupancy limiter</source>
        <extracomment>what limits occupancy</extracomment>
        <translation>Begrenzt durch</translation>
    </message>
    <message>
        <source>Waves</source>
        <translation>Wellen</translation>
    </message>
    <message numerus="yes">
        <source>%n wave(s) over all SMs; a fraction is a partly filled tail wave</source>
        <extracomment>tooltip; %n whole waves</extracomment>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kl::gui::TunablesPanel</name>
    <message>
        <source>This candidate declares no tunables.</source>
        <translation>Dieser Kandidat deklariert keine Parameter.</translation>
    </message>
    <message>
        <source>Declared on line %1
Allowed: %2
Default: %3</source>
        <extracomment>tooltip of a tunable; %1 the source line, %2 the allowed values, %3 the default</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No candidate yet.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>A workbench for closed-loop CUDA kernel optimisation.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>A problem file (problem.json) to open.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save a PNG of the window once the first analysis is shown, then quit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>file</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>

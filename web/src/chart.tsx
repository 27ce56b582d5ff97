/// <reference lib="dom" />
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

/**
 * A uPlot chart (a canvas chart that stays fast at thousands of points) as wide as its box, redrawn as that changes.
 * Its x axis counts (generations, matches): ticks fall on whole numbers only, and the box's `data-x-ticks` lists them
 * (the canvas holds no text to read them from).
 */
export function Chart(
  props: {
    options: Omit<uPlot.Options, "width" | "height">;
    data: uPlot.AlignedData;
    class: string;
    /** What it draws, for those who cannot see the canvas; the x axis's span is added. */
    label: string;
  },
) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const size = () => ({ width: Math.max(280, el.clientWidth), height: CHART_HEIGHT });
    const [x, ...rest] = props.options.axes ?? [{}];
    const counted: uPlot.Axis = {
      ...x,
      incrs: WHOLE_STEPS,
      values: (_u, splits) => {
        el.dataset.xTicks = splits.join(" ");
        return splits.map((s) => s.toLocaleString("en-GB"));
      },
    };
    const chart = new uPlot({ ...props.options, axes: [counted, ...rest], ...size() }, props.data, el);
    const resize = () => chart.setSize(size());
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      chart.destroy();
    };
  }, [props.data]); // callers memoize their data: a chart is drawn again only when it changes
  const x = props.data[0];
  const span = x.length ? `, ${props.options.axes?.[0]?.label ?? "x"} ${x[0]} to ${x.at(-1)}` : "";
  return <div class={`rating-chart ${props.class}`} ref={box} role="img" aria-label={`${props.label}${span}`} />;
}

const CHART_HEIGHT = 270;

/** The steps between x ticks uPlot may choose from: 1, 2, 5, 10, 20, 50, … (never a fraction of a count). */
const WHOLE_STEPS = Array.from({ length: 8 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

/// <reference lib="dom" />
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

/** A uPlot chart (a canvas chart that stays fast at thousands of points) as wide as its box, redrawn as that changes. */
export function Chart(
  props: { options: Omit<uPlot.Options, "width" | "height">; data: uPlot.AlignedData; class: string },
) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const size = () => ({ width: Math.max(280, el.clientWidth), height: CHART_HEIGHT });
    const chart = new uPlot({ ...props.options, ...size() }, props.data, el);
    const resize = () => chart.setSize(size());
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      chart.destroy();
    };
  }, [props.data]); // callers memoize their data: a chart is drawn again only when it changes
  return <div class={`rating-chart ${props.class}`} ref={box} />;
}

const CHART_HEIGHT = 270;
